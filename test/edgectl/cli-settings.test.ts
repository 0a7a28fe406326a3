import { describe, expect, it } from "vitest";
import { ConfigError } from "../../adapters/errors.js";
import { DEFAULT_FLOOR_POOL, DEFAULT_ORIGIN_TEMPLATE } from "../../core/index.js";
import { cliSettingsFromEnv } from "../../edgectl/cli/cli-settings.js";

describe("cliSettingsFromEnv", () => {
  it("reads the routing settings the pusher reads, --prefix winning over ROUTING_PREFIX", () => {
    const env = { ROUTING_PREFIX: "/a/", FLOOR_POOL: "ams-1", ORIGIN_TEMPLATE: "https://{pool}.x" };
    expect(cliSettingsFromEnv(env)).toMatchObject({
      prefix: "/a/",
      floorPool: "ams-1",
      originTemplate: "https://{pool}.x",
    });
    expect(cliSettingsFromEnv(env, { prefix: "/b/" }).prefix).toBe("/b/");
    const both = { ETCD_ENDPOINTS: "10.0.0.1:2379" };
    expect(cliSettingsFromEnv(both).etcd.endpoints).toEqual(["http://10.0.0.1:2379"]);
    expect(
      cliSettingsFromEnv(both, { endpoints: "10.0.0.2:2379, https://10.0.0.3:2379" }).etcd
        .endpoints,
    ).toEqual(["http://10.0.0.2:2379", "https://10.0.0.3:2379"]);
    expect(() => cliSettingsFromEnv(both, { endpoints: " , " })).toThrow("--endpoints: is empty");
    expect(cliSettingsFromEnv({})).toMatchObject({
      floorPool: DEFAULT_FLOOR_POOL,
      originTemplate: DEFAULT_ORIGIN_TEMPLATE,
      lockTtlSeconds: 30,
    });
  });

  it.each([
    ["ROUTING_PREFIX", "/no-slash"],
    ["FLOOR_POOL", "Par_1"],
    ["ORIGIN_TEMPLATE", "{pool}.origin.example.com"],
    ["EDGECTL_LOCK_TTL", "0"],
    ["EDGECTL_MAX_TXN_OPS", "many"],
  ])("rejects %s=%s naming the variable", (name, value) => {
    const run = () => cliSettingsFromEnv({ [name]: value });
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(name);
  });
});
