import { describe, expect, it } from "vitest";
import { carriedState, takeoverSeed } from "../../../core/compile/carry-forward.js";
import { type CompiledMap, compile } from "../../../core/index.js";
import { opts, snap, world } from "../../helpers/snapshot.js";

const map = (kv: Record<string, unknown>, rev: number, previous: CompiledMap | null = null) =>
  compile(snap(kv, rev), opts({ carried: previous })).map;

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

  /** fra-1 with watermarks 800/2000 at p90 `p90`, compiled `s` seconds after 15:00:00 at `rev`. */
  const at = (s: number, p90: number, rev: number, previous: CompiledMap | null) =>
    compile(
      snap(
        world({
          "pool/fra-1": { origin: "https://fra-1.example.net", slow_ms: { low: 800, high: 2000 } },
          "health/fra-1": { status: "healthy", p90_ms: p90 },
        }),
        rev,
      ),
      opts({
        carried: previous,
        now: new Date(Date.parse("2026-11-29T15:00:00.000Z") + s * 1000),
        shedRecoverSeconds: 60,
      }),
    ).map;

  it("never takes a shed's fall clock (below_since) from KV: a restart can delay a step down, never hasten it", () => {
    const rose = at(0, 1400, 10, null);
    expect(rose.sheds?.["fra-1"]).toEqual({ share: 50, at: "2026-11-29T15:00:00.000Z" });
    // KV's copy: written when the p90 first dipped, 10 s in. The p90 rose again after it (which
    // only clears below_since: no routes write), then dipped again.
    const kvCopy = at(10, 1300, 11, rose);
    expect(kvCopy.sheds?.["fra-1"]?.below_since).toBe("2026-11-29T15:00:10.000Z");
    const seed = takeoverSeed(null, kvCopy);
    expect(seed?.sheds?.["fra-1"]).toEqual({ share: 50, at: "2026-11-29T15:00:00.000Z" });
    expect(seed?.countries).toEqual(kvCopy.countries);
    // 75 s in, after the restart: the fall clock starts again here, so the share holds
    const next = at(75, 1300, 20, seed);
    expect(next.sheds?.["fra-1"]).toMatchObject({
      share: 50,
      below_since: "2026-11-29T15:01:15.000Z",
    });
    // KV's stale clock would have stepped down already
    expect(at(75, 1300, 20, kvCopy).sheds?.["fra-1"]?.share).toBe(40);
    // a newer KV map than its own compile is taken without its clock too
    expect(takeoverSeed(rose, kvCopy)?.sheds?.["fra-1"]?.below_since).toBeUndefined();
  });

  it("steps shed shares from KV's, which the edge serves, not from a standby's compile without hysteresis", () => {
    const served = at(0, 1400, 10, null); // the leader shed 50 % at the peak
    // A standby (or a restarted pusher) compiling from nothing at 1100: 20 %, newer revision
    const own = at(20, 1100, 14, null);
    expect(own.sheds?.["fra-1"]?.share).toBe(20);
    const seed = takeoverSeed(own, served);
    expect(seed?.rev).toBe(14);
    expect(seed?.sheds?.["fra-1"]).toEqual({ share: 50, at: "2026-11-29T15:00:00.000Z" });
    expect(at(30, 1100, 15, seed).countries.DE?.shed).toEqual([{ pool: "fra-1", share: 50 }]);
    // its own compile when it serves the same shares (its fall clock included)
    const same = at(40, 1300, 16, served);
    expect(takeoverSeed(same, served)).toBe(same);
    // an older history's shares are not the edge's
    const ownNewHistory = { ...own, history: served.history + 1 };
    expect(takeoverSeed(ownNewHistory, served)).toBe(ownNewHistory);
  });
});

describe("carriedState: what every compile carries, from the maps a process has", () => {
  const slow = (below: boolean) =>
    world({
      "pool/fra-1": { origin: "https://fra-1.example.net", slow_ms: { low: 800, high: 2000 } },
      "health/fra-1": { status: "healthy", p90_ms: below ? 100 : 5000 },
    });

  it("carries nothing from nothing (plan's and apply's edge effect)", () => {
    expect(carriedState({})).toBeNull();
    expect(carriedState({ own: null, kv: null })).toBeNull();
  });

  it("carries the process's own compile as it is, fall clocks included", () => {
    const own = map(world(), 10);
    expect(carriedState({ own })).toBe(own);
  });

  it("never takes a shed's fall clock from KV's map (explain and status read KV alone)", () => {
    const up = compile(snap(slow(false), 10), opts()).map;
    const falling = compile(snap(slow(true), 11), opts({ carried: up })).map;
    expect(falling.sheds?.["fra-1"]?.below_since).toBeDefined();
    const fromKv = carriedState({ kv: falling });
    expect(fromKv?.sheds?.["fra-1"]).toEqual({
      share: falling.sheds?.["fra-1"]?.share,
      at: falling.sheds?.["fra-1"]?.at,
    });
    expect(carriedState({ own: falling })?.sheds?.["fra-1"]?.below_since).toBeDefined();
  });
});
