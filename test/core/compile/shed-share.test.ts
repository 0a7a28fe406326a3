import { describe, expect, it } from "vitest";
import {
  nextShed,
  shedFallTarget,
  shedLevel,
  shedTarget,
} from "../../../core/compile/shed-share.js";
import { type CompiledMap, compile } from "../../../core/index.js";
import { opts, snap, world } from "../../helpers/snapshot.js";

const SLOW = { low: 800, high: 2000 };
const T0 = Date.parse("2026-11-29T15:00:00.000Z");
const MIN = 60_000;

describe("shedTarget: linear between the watermarks, in steps of 10 %", () => {
  it.each([
    [undefined, 0],
    [300, 0],
    [800, 0],
    [919, 0],
    [920, 10],
    [1400, 50],
    [1999, 90],
    [2000, 100],
    [9000, 100],
  ])("p90 %s → %i %%", (p90, share) => {
    expect(shedTarget(p90, SLOW)).toBe(share);
  });

  it("no watermarks: nothing is shed", () => {
    expect(shedTarget(5000, undefined)).toBe(0);
  });

  it("a step's level is the p90 at which it begins", () => {
    expect(shedLevel(50, SLOW)).toBe(1400);
    expect(shedTarget(shedLevel(30, SLOW), SLOW)).toBe(30);
  });

  it("falling below a step takes a p90 half a step under its level", () => {
    expect(shedFallTarget(1400 - 60, SLOW)).toBe(50);
    expect(shedFallTarget(1400 - 61, SLOW)).toBe(40);
    expect(shedFallTarget(800, SLOW)).toBe(0);
    expect(shedFallTarget(undefined, SLOW)).toBe(0);
  });
});

describe("nextShed: rises at once, falls one step per recover period", () => {
  const at = (ms: number) => new Date(ms).toISOString();

  it("rises at once and stamps the change", () => {
    expect(nextShed(undefined, 50, 50, T0, MIN)).toEqual({ share: 50, at: at(T0) });
    expect(nextShed({ share: 20, at: at(T0) }, 60, 60, T0 + 1, MIN)).toEqual({
      share: 60,
      at: at(T0 + 1),
    });
  });

  it("an unchanged share keeps its time", () => {
    const prev = { share: 50, at: at(T0) };
    expect(nextShed(prev, 50, 50, T0 + 5 * MIN, MIN)).toBe(prev);
    expect(nextShed(prev, 40, 50, T0 + 5 * MIN, MIN)).toBe(prev);
  });

  it("falls by one step only once the p90 has stayed low for a period since the last change", () => {
    const prev = { share: 50, at: at(T0) };
    // Low from T0 + 5 min on: the period counts from then, not from the old change.
    const low = nextShed(prev, 0, 0, T0 + 5 * MIN, MIN);
    expect(low).toEqual({ share: 50, at: at(T0), below_since: at(T0 + 5 * MIN) });
    expect(nextShed(low, 0, 0, T0 + 6 * MIN - 1, MIN)).toBe(low);
    const step = nextShed(low, 0, 0, T0 + 6 * MIN, MIN);
    expect(step).toEqual({ share: 40, at: at(T0 + 6 * MIN), below_since: at(T0 + 5 * MIN) });
    // The next step counts from that change.
    expect(nextShed(step, 0, 0, T0 + 7 * MIN - 1, MIN)).toBe(step);
    expect(nextShed(step, 0, 0, T0 + 7 * MIN, MIN)?.share).toBe(30);
    // Never below what the p90 allows.
    expect(nextShed(step, 40, 40, T0 + 10 * MIN, MIN)).toEqual({ share: 40, at: step?.at });
  });

  it("a p90 back at the step's level starts the period again", () => {
    const low = { share: 50, at: at(T0), below_since: at(T0 + MIN) };
    const back = nextShed(low, 50, 50, T0 + 90_000, MIN);
    expect(back).toEqual({ share: 50, at: at(T0) });
    const lowAgain = nextShed(back, 0, 0, T0 + 100_000, MIN);
    expect(lowAgain?.below_since).toBe(at(T0 + 100_000));
    expect(nextShed(lowAgain, 0, 0, T0 + 100_000 + MIN - 1, MIN)).toBe(lowAgain);
  });

  it("a last step to 0 ends the shed", () => {
    const low = { share: 10, at: at(T0), below_since: at(T0) };
    expect(nextShed(low, 0, 0, T0 + MIN, MIN)).toBeUndefined();
  });

  it("an unreadable time steps down now", () => {
    expect(nextShed({ share: 30, at: "x" }, 0, 0, T0, MIN)).toEqual({
      share: 20,
      at: at(T0),
      below_since: at(T0),
    });
  });
});

describe("compile: the shed share carried from map to map", () => {
  const slowWorld = (p90: number) =>
    world({
      "pool/fra-1": { origin: "https://fra-1.example.net", slow_ms: SLOW },
      "health/fra-1": { status: "healthy", p90_ms: p90 },
    });
  const step = (p90: number, ms: number, previous: CompiledMap | null, recover = 60) =>
    compile(
      snap(slowWorld(p90)),
      opts({ now: new Date(ms), carried: previous, shedRecoverSeconds: recover }),
    );

  it("p90 1400 with 800/2000: fra-1 sheds 50 % and the map says so", () => {
    const { map, nextShedStepAt } = step(1400, T0, null);
    expect(map.sheds).toEqual({ "fra-1": { share: 50, at: new Date(T0).toISOString() } });
    expect(map.countries.DE?.shed).toEqual([{ pool: "fra-1", share: 50 }]);
    expect(map.countries.DE?.weights).toEqual([
      { pool: "fra-1", weight: 500 },
      { pool: "ams-1", weight: 500 },
    ]);
    expect(map.countries.DE?.pool).toBe("fra-1");
    expect(map.default.shed).toBeUndefined();
    expect(nextShedStepAt).toBeNull();
  });

  it("p90 back at 300: one step per recover period, and the compile says when", () => {
    let r = step(1400, T0, null, 30);
    // The p90 falls at T1: the first step is one period later.
    const T1 = T0 + 1000;
    r = step(300, T1, r.map, 30);
    expect(r.map.sheds?.["fra-1"]).toMatchObject({
      share: 50,
      below_since: new Date(T1).toISOString(),
    });
    expect(r.nextShedStepAt).toBe(T1 + 30_000);
    const shares: number[] = [];
    for (let i = 1; i <= 6; i++) {
      const now = T1 + i * 30_000;
      const early = step(300, now - 1, r.map, 30);
      expect(early.map.sheds?.["fra-1"]?.share ?? 0).toBe(shares.at(-1) ?? 50);
      expect(early.nextShedStepAt).toBe(shares.length === 5 ? null : now);
      r = step(300, now, r.map, 30);
      shares.push(r.map.sheds?.["fra-1"]?.share ?? 0);
    }
    expect(shares).toEqual([40, 30, 20, 10, 0, 0]);
    expect(r.map.sheds).toBeUndefined();
    expect(r.map.countries.DE?.weights).toBeUndefined();
    expect(r.map.countries.DE?.shed).toBeUndefined();
  });

  it("a p90 that wanders around a step's level moves nothing back and forth", () => {
    let r = step(1450, T0, null);
    const seen = new Set<number>();
    for (let i = 1; i <= 40; i++) {
      r = step(i % 2 === 0 ? 1450 : 1350, T0 + i * 5000, r.map);
      seen.add(r.map.sheds?.["fra-1"]?.share ?? 0);
    }
    expect([...seen]).toEqual([50]);
  });

  it("a p90 that swings wide but never stays low for a recover period moves nothing back", () => {
    let r = step(1700, T0, null);
    const shares = [r.map.sheds?.["fra-1"]?.share ?? 0];
    for (let i = 1; i <= 120; i++) {
      r = step(i % 6 < 3 ? 1000 : 1700, T0 + i * 5000, r.map);
      shares.push(r.map.sheds?.["fra-1"]?.share ?? 0);
    }
    expect(new Set(shares)).toEqual(new Set([70]));
    // Low for good: it steps down, one step a minute.
    const t = T0 + 121 * 5000;
    for (let i = 0; i <= 3; i++) r = step(1000, t + i * MIN, r.map);
    expect(r.map.sheds?.["fra-1"]?.share).toBe(40);
  });

  it("removing slow_ms or losing the pool ends its shed at once", () => {
    const first = step(1400, T0, null);
    const plain = compile(
      snap(world({ "health/fra-1": { status: "healthy", p90_ms: 1400 } })),
      opts({ carried: first.map }),
    );
    expect(plain.map.sheds).toBeUndefined();
    const down = compile(
      snap({ ...slowWorld(1400), "health/fra-1": { status: "unhealthy" } }),
      opts({ carried: first.map }),
    );
    expect(down.map.sheds).toBeUndefined();
  });

  it("a shed route keeps its rule in `kept`, so the next compile can still fall back on it", () => {
    const { map } = step(1400, T0, null);
    expect(map.kept?.DE).toEqual({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] });
    const broken = compile(
      snap({ ...slowWorld(300), "country/DE": "{" }),
      opts({ carried: map, now: new Date(T0 + 1000) }),
    );
    expect(broken.map.countries.DE?.chain.map((c) => c.pool)).toEqual(["fra-1", "ams-1", "par-1"]);
    expect(broken.map.countries.DE?.shed).toEqual([{ pool: "fra-1", share: 50 }]);
  });

  it("every pool of a chain slow: nothing is shed and the route is all-pools-slow", () => {
    const slow = { origin: "", slow_ms: SLOW };
    const kv = world({
      "pool/fra-1": { ...slow, origin: "https://fra-1.example.net" },
      "pool/ams-1": { ...slow, origin: "https://ams-1.example.net" },
      "pool/par-1": { ...slow, origin: "https://par-1.example.net" },
      "health/fra-1": { status: "healthy", p90_ms: 2500 },
      "health/ams-1": { status: "healthy", p90_ms: 2100 },
      "health/par-1": { status: "healthy", p90_ms: 3000 },
    });
    const { map } = compile(snap(kv), opts());
    expect(map.countries.DE).toMatchObject({ pool: "fra-1", degraded: "all-pools-slow" });
    expect(map.countries.DE?.shed).toBeUndefined();
    expect(map.countries.DE?.weights).toBeUndefined();
    expect(map.countries.DE?.chain).toHaveLength(3);
    expect(map.default.degraded).toBe("all-pools-slow");
    // One pool of the chain not fully slow: the others' viewers all go to it.
    const ok = compile(
      snap({ ...kv, "health/par-1": { status: "healthy", p90_ms: 900 } }),
      opts(),
    ).map;
    expect(ok.countries.DE?.degraded).toBeNull();
    expect(ok.countries.DE?.weights).toEqual([{ pool: "par-1", weight: 1000 }]);
    expect(ok.countries.DE?.shed).toEqual([
      { pool: "fra-1", share: 100 },
      { pool: "ams-1", share: 100 },
    ]);
  });
});
