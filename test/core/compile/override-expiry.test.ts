import { describe, expect, it } from "vitest";
import {
  nextOverrideExpiry,
  withoutExpiredOverrides,
} from "../../../core/compile/override-expiry.js";
import { compile, decodeSnapshot } from "../../../core/index.js";
import { opts, P, snap, world } from "../../helpers/snapshot.js";

const NOW = new Date("2026-11-29T15:00:00.000Z");
const at = (offsetS: number) => new Date(NOW.getTime() + offsetS * 1000).toISOString();

describe("override expiry in compile", () => {
  it("ignores an override whose expires_at has passed, even while its key is still in etcd", () => {
    const kv = world({
      "override/DE": { primary: "par-1", fallbacks: [], reason: "boost", expires_at: at(-1) },
    });
    const m = compile(snap(kv), opts({ now: NOW })).map;
    expect(m.countries.DE?.source).toBe("country/DE");
    expect(m.countries.DE?.pool).toBe("fra-1");
    expect(m.problems).toEqual([]);
  });

  it("ends the override at the instant itself, not a moment later", () => {
    const kv = world({ "override/DE": { primary: "par-1", expires_at: at(0) } });
    expect(compile(snap(kv), opts({ now: NOW })).map.countries.DE?.source).toBe("country/DE");
    const before = new Date(NOW.getTime() - 1);
    expect(compile(snap(kv), opts({ now: before })).map.countries.DE?.source).toBe("override/DE");
  });

  it("keeps an override that has not expired, or has no expires_at, and honours offsets", () => {
    const kv = world({
      "override/DE": { primary: "par-1", expires_at: at(60) },
      "override/FR": { primary: "ams-1" },
      // 15:00:30 at +01:00 is 14:00:30Z: long past.
      "override/_default": { primary: "fra-1", expires_at: "2026-11-29T15:00:30+01:00" },
    });
    const m = compile(snap(kv), opts({ now: NOW })).map;
    expect(m.countries.DE?.source).toBe("override/DE");
    expect(m.countries.FR?.source).toBe("override/FR");
    expect(m.default.source).toBe("country/_default");
  });

  it("names the earliest future expiry for the recompile timer", () => {
    const state = decodeSnapshot(
      snap(
        world({
          "override/DE": { primary: "par-1", expires_at: at(90) },
          "override/FR": { primary: "ams-1", expires_at: at(30) },
          "override/IT": { primary: "ams-1", expires_at: at(-5) },
          "override/ES": { primary: "ams-1" },
        }),
      ),
      P,
    );
    expect(nextOverrideExpiry(state, NOW)).toBe(NOW.getTime() + 30_000);
    const active = withoutExpiredOverrides(state, NOW);
    expect([...active.overrides.keys()].sort()).toEqual(["DE", "ES", "FR"]);
    expect(nextOverrideExpiry(decodeSnapshot(snap(world()), P), NOW)).toBeNull();
  });

  it("names a continent override's expiry for the recompile timer, not only a country's", () => {
    const only = decodeSnapshot(
      snap(world({ "override/EU": { primary: "par-1", reason: "boost", expires_at: at(20) } })),
      P,
    );
    expect(nextOverrideExpiry(only, NOW)).toBe(NOW.getTime() + 20_000);
    const mixed = decodeSnapshot(
      snap(
        world({
          "override/DE": { primary: "par-1", expires_at: at(90) },
          "override/EU": { primary: "par-1", expires_at: at(40) },
          "override/continent/NA": { primary: "ams-1", expires_at: at(15) },
          "override/_default": { primary: "fra-1", expires_at: at(60) },
        }),
      ),
      P,
    );
    expect(nextOverrideExpiry(mixed, NOW)).toBe(NOW.getTime() + 15_000);
    // The recompile at that instant ends the boost: the continent's countries leave it.
    const boosted = compile(
      snap(world({ "override/EU": { primary: "par-1", expires_at: at(20) } })),
      opts({ now: NOW }),
    ).map;
    expect(boosted.countries.FR?.source).toBe("override/EU");
    const after = new Date(NOW.getTime() + 20_000);
    const ended = compile(
      snap(world({ "override/EU": { primary: "par-1", expires_at: at(20) } })),
      opts({ now: after }),
    ).map;
    expect(ended.countries.FR?.source).not.toBe("override/EU");
  });
});
