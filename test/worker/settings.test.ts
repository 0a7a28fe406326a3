import { readFileSync } from "node:fs";
import { parse } from "smol-toml";
import { describe, expect, it } from "vitest";
import { parseSteerSettings } from "../../core/contract/steer-settings.js";
import { parseCacheSettings } from "../../worker/cache/cache-settings.js";
import { noMapRoute as floorRoute } from "../../worker/no-map-route.js";
import { parseObserveSettings } from "../../worker/observe/observe-settings.js";
import { parseSettings } from "../../worker/settings.js";

describe("worker settings", () => {
  it("uses the documented defaults when nothing is set", () => {
    expect(parseSettings({})).toEqual({
      originTemplate: "https://{pool}.origin.example.com",
      floorPool: "par-1",
      kvCacheTtl: 30,
      isolateCacheMs: 5000,
      maxAttempts: 2,
      originTimeoutMs: 4000,
      hedgeMs: 1000,
      onceTimeoutMs: 30_000,
      debugToken: null,
      signingSecrets: [],
      ejectAfter: 2,
      ejectMs: 10_000,
    });
  });

  it("parses valid values", () => {
    const s = parseSettings({
      ORIGIN_TEMPLATE: "http://{pool}.internal:8080",
      FLOOR_POOL: "lon-2",
      KV_CACHE_TTL: "300",
      ISOLATE_CACHE_SECONDS: "0",
      MAX_ATTEMPTS: "3",
      ORIGIN_TIMEOUT_MS: "2500",
      ORIGIN_HEDGE_MS: "700",
      ORIGIN_ONCE_TIMEOUT_MS: "60000",
      EDGE_EJECT_AFTER: "0",
      EDGE_EJECT_SECONDS: "30",
      DEBUG_TOKEN: "s3cret",
    });
    expect(s).toEqual({
      originTemplate: "http://{pool}.internal:8080",
      floorPool: "lon-2",
      kvCacheTtl: 300,
      isolateCacheMs: 0,
      maxAttempts: 3,
      originTimeoutMs: 2500,
      hedgeMs: 700,
      onceTimeoutMs: 60_000,
      debugToken: "s3cret",
      signingSecrets: [],
      ejectAfter: 0,
      ejectMs: 30_000,
    });
  });

  it("signs with ORIGIN_SIGNING_KEY, then ORIGIN_SIGNING_KEY_PREVIOUS; the previous alone signs nothing", () => {
    expect(parseSettings({ ORIGIN_SIGNING_KEY: "new" }).signingSecrets).toEqual(["new"]);
    expect(
      parseSettings({ ORIGIN_SIGNING_KEY: "new", ORIGIN_SIGNING_KEY_PREVIOUS: "old" })
        .signingSecrets,
    ).toEqual(["new", "old"]);
    expect(
      parseSettings({ ORIGIN_SIGNING_KEY: "same", ORIGIN_SIGNING_KEY_PREVIOUS: "same" })
        .signingSecrets,
    ).toEqual(["same"]);
    expect(parseSettings({ ORIGIN_SIGNING_KEY_PREVIOUS: "old" }).signingSecrets).toEqual([]);
    expect(parseSettings({ ORIGIN_SIGNING_KEY: "" }).signingSecrets).toEqual([]);
  });

  it("clamps KV_CACHE_TTL to KV's minimum of 30 s and MAX_ATTEMPTS to at least 1", () => {
    const s = parseSettings({ KV_CACHE_TTL: "5", MAX_ATTEMPTS: "0" });
    expect(s.kvCacheTtl).toBe(30);
    expect(s.maxAttempts).toBe(1);
  });

  it("clamps ORIGIN_TIMEOUT_MS to 100 ms – 100 s", () => {
    expect(parseSettings({ ORIGIN_TIMEOUT_MS: "0" }).originTimeoutMs).toBe(100);
    expect(parseSettings({ ORIGIN_TIMEOUT_MS: "99" }).originTimeoutMs).toBe(100);
    expect(parseSettings({ ORIGIN_TIMEOUT_MS: "100000" }).originTimeoutMs).toBe(100_000);
    expect(parseSettings({ ORIGIN_TIMEOUT_MS: "999999999" }).originTimeoutMs).toBe(100_000);
  });

  it("clamps ORIGIN_HEDGE_MS to 100 ms – 100 s, and a garbled one hedges after 1 s", () => {
    expect(parseSettings({ ORIGIN_HEDGE_MS: "0" }).hedgeMs).toBe(100);
    expect(parseSettings({ ORIGIN_HEDGE_MS: "999999999" }).hedgeMs).toBe(100_000);
    expect(parseSettings({ ORIGIN_HEDGE_MS: "1s" }).hedgeMs).toBe(1000);
  });

  it("clamps ORIGIN_ONCE_TIMEOUT_MS to 100 ms – 100 s", () => {
    expect(parseSettings({ ORIGIN_ONCE_TIMEOUT_MS: "0" }).onceTimeoutMs).toBe(100);
    expect(parseSettings({ ORIGIN_ONCE_TIMEOUT_MS: "100000" }).onceTimeoutMs).toBe(100_000);
    expect(parseSettings({ ORIGIN_ONCE_TIMEOUT_MS: "999999999" }).onceTimeoutMs).toBe(100_000);
  });

  it.each(["", "abc", "-1", "1.5", "1e3", "NaN", "Infinity", " ", "4s", "0x10"])(
    "falls back to defaults for garbage %j",
    (raw) => {
      const s = parseSettings({
        KV_CACHE_TTL: raw,
        ISOLATE_CACHE_SECONDS: raw,
        MAX_ATTEMPTS: raw,
        ORIGIN_TIMEOUT_MS: raw,
        ORIGIN_ONCE_TIMEOUT_MS: raw,
        ORIGIN_TEMPLATE: raw,
        EDGE_EJECT_AFTER: raw,
        EDGE_EJECT_SECONDS: raw,
      });
      expect(s).toEqual(parseSettings({}));
    },
  );

  it.each(["", "Par_1", "-par", "a".repeat(64), "par 1"])("rejects FLOOR_POOL %j", (raw) => {
    expect(parseSettings({ FLOOR_POOL: raw }).floorPool).toBe("par-1");
  });

  it("clamps EDGE_EJECT_AFTER to 0–1000 and EDGE_EJECT_SECONDS to 1 s – 1 h", () => {
    expect(parseSettings({ EDGE_EJECT_AFTER: "5000" }).ejectAfter).toBe(1000);
    expect(parseSettings({ EDGE_EJECT_SECONDS: "0" }).ejectMs).toBe(1000);
    expect(parseSettings({ EDGE_EJECT_SECONDS: "99999" }).ejectMs).toBe(3_600_000);
  });

  it("treats an empty DEBUG_TOKEN as unset", () => {
    expect(parseSettings({ DEBUG_TOKEN: "" }).debugToken).toBeNull();
  });

  it("rejects a template a header cannot carry (the floor's X-Edge-Origin)", () => {
    expect(
      parseSettings({ ORIGIN_TEMPLATE: "https://{pool}.vid\u00e9o.example" }).originTemplate,
    ).toBe("https://{pool}.origin.example.com");
  });

  it("rejects a floor pool that is not a DNS label and a non-http template", () => {
    const s = parseSettings({ FLOOR_POOL: "Par_1", ORIGIN_TEMPLATE: "ftp://{pool}.x" });
    expect(s.floorPool).toBe("par-1");
    expect(s.originTemplate).toBe("https://{pool}.origin.example.com");
  });

  it("builds the floor route from FLOOR_POOL and ORIGIN_TEMPLATE", () => {
    const route = floorRoute(
      parseSettings({ FLOOR_POOL: "lon-2", ORIGIN_TEMPLATE: "http://{pool}.lan" }),
    );
    expect(route).toEqual({
      pool: "lon-2",
      origin: "http://lon-2.lan",
      chain: [{ pool: "lon-2", origin: "http://lon-2.lan" }],
      source: "floor",
      degraded: null,
    });
  });
});

describe("wrangler configurations", () => {
  const VARS = [
    "ORIGIN_TEMPLATE",
    "FLOOR_POOL",
    "KV_CACHE_TTL",
    "ISOLATE_CACHE_SECONDS",
    "MAX_ATTEMPTS",
    "ORIGIN_TIMEOUT_MS",
    "ORIGIN_HEDGE_MS",
    "ORIGIN_ONCE_TIMEOUT_MS",
    "EDGE_EJECT_AFTER",
    "EDGE_EJECT_SECONDS",
    "OBSERVE_FLUSH_SECONDS",
    "CACHE",
    "CACHE_IGNORE_PARAMS",
    "CACHE_STALE_IF_ERROR_SECONDS",
    "STEER",
    "STEER_PARAM",
    "STEER_TTL_SECONDS",
    "STEER_RATE",
  ];
  const toml = parse(readFileSync(new URL("../../wrangler.toml", import.meta.url), "utf8"));
  const env = toml.env as Record<string, { vars: Record<string, string> }>;
  it.each([
    ["[vars] (local)", toml.vars as Record<string, string>],
    ["[env.production.vars]", env.production?.vars ?? {}],
  ])(
    "wrangler.toml %s sets every var, each to a value the Worker takes as written",
    (_name, vars) => {
      expect(Object.keys(vars).sort()).toEqual([...VARS].sort());
      const s = parseSettings(vars);
      expect(s.originTimeoutMs).toBe(Number(vars.ORIGIN_TIMEOUT_MS));
      expect(s.originTimeoutMs).toBe(4000);
      expect(s.hedgeMs).toBe(Number(vars.ORIGIN_HEDGE_MS));
      expect(s.hedgeMs).toBe(1000);
      expect(s.onceTimeoutMs).toBe(Number(vars.ORIGIN_ONCE_TIMEOUT_MS));
      expect(s.onceTimeoutMs).toBe(30_000);
      expect(s.maxAttempts).toBe(Number(vars.MAX_ATTEMPTS));
      expect(s.isolateCacheMs).toBe(Number(vars.ISOLATE_CACHE_SECONDS) * 1000);
      expect(s.kvCacheTtl).toBe(Number(vars.KV_CACHE_TTL));
      // KV's minimum cacheTtl: a higher one only delays every change at the edge
      expect(s.kvCacheTtl).toBe(30);
      expect(s.floorPool).toBe(vars.FLOOR_POOL);
      expect(s.originTemplate).toBe(vars.ORIGIN_TEMPLATE);
      expect(s.ejectAfter).toBe(Number(vars.EDGE_EJECT_AFTER));
      expect(s.ejectAfter).toBe(2);
      expect(s.ejectMs).toBe(Number(vars.EDGE_EJECT_SECONDS) * 1000);
      expect(s.ejectMs).toBe(10_000);
      expect(parseObserveSettings(vars).flushMs).toBe(Number(vars.OBSERVE_FLUSH_SECONDS) * 1000);
      expect(parseObserveSettings(vars).flushMs).toBe(10_000);
      const cache = parseCacheSettings(vars);
      expect(cache.on).toBe(true);
      expect(cache.ignoreParams.size).toBe(0);
      expect(cache.staleIfErrorS).toBe(Number(vars.CACHE_STALE_IF_ERROR_SECONDS));
      expect(cache.staleIfErrorS).toBe(0);
      const steer = parseSteerSettings(vars);
      expect(steer).toEqual({ rewrite: false, param: "edge_pathway", ttlS: 30, ratePerS: 200 });
      expect(steer.ttlS).toBe(Number(vars.STEER_TTL_SECONDS));
      expect(steer.ratePerS).toBe(Number(vars.STEER_RATE));
    },
  );
});
