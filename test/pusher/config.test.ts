import { describe, expect, it } from "vitest";
import { ConfigError } from "../../adapters/errors.js";
import { helpText, PUSHER_ENV, pusherConfigFromEnv } from "../../pusher/config.js";

const host = { hostname: "h", pid: 42 };

describe("pusher config", () => {
  it("applies the documented defaults", () => {
    const c = pusherConfigFromEnv({}, host);
    expect(c).toMatchObject({
      prefix: "/edge/routing/v1/",
      listen: { host: "127.0.0.1", port: 9464 },
      heartbeatSeconds: 60,
      resyncSeconds: 600,
      electionKey: "/edge/pusher/v1/leader",
      electionTtl: 10,
      pusherId: "h-42",
      floorPool: "par-1",
    });
    expect(c.etcd.endpoints).toEqual(["http://127.0.0.1:2379"]);
  });

  it("reads every variable", () => {
    const c = pusherConfigFromEnv(
      {
        ETCD_ENDPOINTS: "http://a:1,http://b:2",
        ROUTING_PREFIX: "/x/",
        PUSHER_LISTEN: "0.0.0.0:9000",
        PUSHER_ALLOWED_HOSTS: "pusher-1.example.net, 192.0.2.7",
        HEARTBEAT_SECONDS: "5",
        RESYNC_SECONDS: "30",
        PUSHER_ELECTION_KEY: "/p/leader/",
        PUSHER_ELECTION_TTL: "3",
        PUSHER_ID: "me",
        FLOOR_POOL: "ams-1",
        ORIGIN_TEMPLATE: "https://{pool}.x",
      },
      host,
    );
    expect(c).toMatchObject({
      prefix: "/x/",
      listen: { host: "0.0.0.0", port: 9000 },
      allowedHosts: ["pusher-1.example.net", "192.0.2.7"],
      heartbeatSeconds: 5,
      resyncSeconds: 30,
      electionKey: "/p/leader",
      electionTtl: 3,
      pusherId: "me",
      floorPool: "ams-1",
      originTemplate: "https://{pool}.x",
    });
  });

  it.each([
    ["HEARTBEAT_SECONDS", "0"],
    ["RESYNC_SECONDS", "soon"],
    ["PUSHER_ELECTION_TTL", "1"],
    ["PUSHER_LISTEN", "9464"],
    ["PUSHER_ALLOWED_HOSTS", "https://pusher-1.example.net"],
    ["ROUTING_PREFIX", "/no-slash"],
    ["ORIGIN_TEMPLATE", "{pool}.origin.example.com"],
    ["ORIGIN_TEMPLATE", "https://{pool}.origin.example.com/path"],
    ["FLOOR_POOL", "Par_1"],
  ])("rejects %s=%s naming the variable", (name, value) => {
    const run = () => pusherConfigFromEnv({ [name]: value }, host);
    expect(run).toThrow(ConfigError);
    expect(run).toThrow(name);
  });

  it("accepts bare host:port etcd endpoints, with the scheme the TLS settings imply", () => {
    expect(
      pusherConfigFromEnv({ ETCD_ENDPOINTS: "127.0.0.1:2379, h2:1" }, host).etcd.endpoints,
    ).toEqual(["http://127.0.0.1:2379", "http://h2:1"]);
    const tls = pusherConfigFromEnv({ ETCD_ENDPOINTS: "e1:2379", ETCD_CA_FILE: "/ca.pem" }, host);
    expect(tls.etcd.endpoints).toEqual(["https://e1:2379"]);
    expect(() => pusherConfigFromEnv({ ETCD_ENDPOINTS: "ftp://e1:2379" }, host)).toThrow(
      "ETCD_ENDPOINTS",
    );
    expect(() => pusherConfigFromEnv({ ETCD_ENDPOINTS: "e1:2379/path" }, host)).toThrow(
      "ETCD_ENDPOINTS",
    );
  });

  it("documents every variable in --help", () => {
    const text = helpText();
    for (const v of PUSHER_ENV) expect(text).toContain(v.name);
  });
});
