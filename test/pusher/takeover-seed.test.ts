import { describe, expect, it } from "vitest";
import { type CompiledMap, compile } from "../../core/index.js";
import { takeoverSeed } from "../../pusher/takeover-seed.js";
import { opts, snap, world } from "../helpers/snapshot.js";

const map = (kv: Record<string, unknown>, rev: number, previous: CompiledMap | null = null) =>
  compile(snap(kv, rev), opts({ previous })).map;

const de = (rule: unknown) => world({ "country/DE": rule });
const FR_PAR = { "country/FR": { primary: "par-1", fallbacks: [] } };

describe("takeoverSeed: the last valid rules a new writer starts from", () => {
  it("keeps its own compile's rule when KV's map is an older (possibly stale) copy", () => {
    const v1 = map(de({ primary: "fra-1", fallbacks: [] }), 10); // KV's stale copy: DE on fra-1
    const v2 = map(de({ primary: "par-1", fallbacks: ["ams-1"] }), 11);
    const own = map(de("{broken"), 12, v2); // DE invalid now: its last valid rule is par-1
    const seed = takeoverSeed(own, v1);
    expect(seed).toBe(own);
    expect(map(de("{broken"), 13, seed).countries.DE?.pool).toBe("par-1");
    // With KV's stale copy as the seed, DE would go back to fra-1.
    expect(map(de("{broken"), 13, v1).countries.DE?.pool).toBe("fra-1");
  });

  it("fills in from an older KV map only the rules its own compile knows nothing of", () => {
    const kvMap = map(world(FR_PAR), 10); // FR valid then, on par-1
    // This process started after FR's rule broke: its compile has no last valid rule for FR.
    const own = map(world({ "country/FR": "{broken" }), 12);
    expect(own.countries.FR).toBeUndefined();
    const seed = takeoverSeed(own, kvMap);
    expect(seed?.kept?.FR).toEqual({ primary: "par-1", fallbacks: [] });
    expect(seed?.rev).toBe(own.rev);
    const next = map(world({ "country/FR": "{broken" }), 13, seed);
    expect(next.countries.FR?.pool).toBe("par-1");
    expect(next.countries.DE?.pool).toBe("fra-1");
  });

  it("takes KV's map when it is newer than its own compile, and either when the other is absent", () => {
    const own = map(world(), 10);
    const newer = map(world(FR_PAR), 14);
    expect(takeoverSeed(own, newer)).toBe(newer);
    expect(takeoverSeed(null, own)).toBe(own);
    expect(takeoverSeed(own, null)).toBe(own);
    expect(takeoverSeed(null, null)).toBeNull();
    const otherHistory = { ...map(world(FR_PAR), 5), history: own.history + 1 };
    expect(takeoverSeed(own, otherHistory)).toBe(otherHistory);
  });
});
