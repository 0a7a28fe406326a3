import { describe, expect, it } from "vitest";
import { carriedState } from "../../../core/compile/carry-forward.js";
import { serializeMap } from "../../../core/compile/map-serialize.js";
import { viewerSheds } from "../../../core/compile/viewer-sheds.js";
import { type CompiledMap, compile, decodeSnapshot, parseMap } from "../../../core/index.js";
import { opts, P, snap } from "../../helpers/snapshot.js";

const SLOW = { low: 800, high: 2000 };
const T0 = Date.parse("2026-11-29T15:00:00.000Z");
const MIN = 60_000;
const at = (ms: number) => new Date(ms).toISOString();

/** fra-1 sheds by its viewers; ams-1 is the next pool; BR follows `_default`, US has its own rule. */
function viewersWorld(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    "pool/fra-1": { origin: "https://fra-1.example.net", slow_ms: SLOW, viewers: true },
    "pool/ams-1": { origin: "https://ams-1.example.net" },
    "health/fra-1": { status: "healthy", p90_ms: 100 },
    "health/ams-1": { status: "healthy", p90_ms: 100 },
    "country/_default": { primary: "fra-1", fallbacks: ["ams-1"] },
    "country/US": { primary: "fra-1", fallbacks: ["ams-1"] },
    epoch: "1",
    ...extra,
  };
}

const seen = (p90: number, samples = 200) => ({ p90_ms: p90, samples, error_ratio: 0 });

function compileAt(
  kv: Record<string, unknown>,
  ms: number,
  carried: CompiledMap | null,
  rev = 10,
): ReturnType<typeof compile> {
  return compile(snap(kv, rev), opts({ now: new Date(ms), carried }));
}

describe("viewer sheds: a country sheds its own viewers of a `viewers: true` pool", () => {
  it("BR's slow viewers shed BR off fra-1 by the watermarks; US and the default keep it", () => {
    const { map } = compileAt(viewersWorld({ "observed/BR/fra-1": seen(1400) }), T0, null);
    expect(map.countries.BR).toEqual({
      pool: "fra-1",
      origin: "https://fra-1.example.net",
      chain: [
        { pool: "fra-1", origin: "https://fra-1.example.net" },
        { pool: "ams-1", origin: "https://ams-1.example.net" },
      ],
      source: "country/_default",
      degraded: null,
      weights: [
        { pool: "fra-1", weight: 500 },
        { pool: "ams-1", weight: 500 },
      ],
      shed: [{ pool: "fra-1", share: 50, by: "viewers" }],
    });
    expect(map.countries.US?.shed).toBeUndefined();
    expect(map.countries.US?.weights).toBeUndefined();
    expect(map.default.shed).toBeUndefined();
    expect(map.sheds).toBeUndefined();
    expect(map.viewer_sheds).toEqual({ BR: { "fra-1": { share: 50, at: at(T0) } } });
    expect(serializeMap(map)).toContain('"shed":[{"pool":"fra-1","share":50,"by":"viewers"}]');
  });

  it("nothing is shed by viewers without `viewers: true`, below `low`, or for an unhealthy pool", () => {
    const plain = viewersWorld({
      "pool/fra-1": { origin: "https://fra-1.example.net", slow_ms: SLOW },
      "observed/BR/fra-1": seen(5000),
    });
    expect(compileAt(plain, T0, null).map.viewer_sheds).toBeUndefined();
    const fast = viewersWorld({ "observed/BR/fra-1": seen(800) });
    expect(compileAt(fast, T0, null).map.viewer_sheds).toBeUndefined();
    const down = viewersWorld({
      "observed/BR/fra-1": seen(5000),
      "health/fra-1": { status: "unhealthy" },
    });
    expect(compileAt(down, T0, null).map.viewer_sheds).toBeUndefined();
  });

  it("a country with a rule of its own sheds inside that rule's route", () => {
    const { map } = compileAt(viewersWorld({ "observed/US/fra-1": seen(2500) }), T0, null);
    expect(map.countries.US?.source).toBe("country/US");
    expect(map.countries.US?.weights).toEqual([{ pool: "ams-1", weight: 1000 }]);
    expect(map.countries.US?.shed).toEqual([{ pool: "fra-1", share: 100, by: "viewers" }]);
    expect(map.countries.BR).toBeUndefined();
  });

  it("the larger of the pool's shed and the viewers' applies, and says whose it is", () => {
    const checkersSlow = (p90: number) => ({ "health/fra-1": { status: "healthy", p90_ms: p90 } });
    const viewersMore = compileAt(
      viewersWorld({ ...checkersSlow(1160), "observed/BR/fra-1": seen(1400) }),
      T0,
      null,
    ).map;
    expect(viewersMore.countries.BR?.shed).toEqual([{ pool: "fra-1", share: 50, by: "viewers" }]);
    expect(viewersMore.countries.US?.shed).toEqual([{ pool: "fra-1", share: 30 }]);
    const poolMore = compileAt(
      viewersWorld({ ...checkersSlow(1640), "observed/BR/fra-1": seen(1400) }),
      T0,
      null,
    ).map;
    expect(poolMore.countries.BR?.shed).toEqual([{ pool: "fra-1", share: 70 }]);
  });

  it("steps like §9: up at once, down one step per recover period, the observation's absence too", () => {
    const slow = compileAt(viewersWorld({ "observed/BR/fra-1": seen(1400) }), T0, null);
    expect(slow.map.viewer_sheds?.BR?.["fra-1"]?.share).toBe(50);
    expect(slow.nextShedStepAt).toBeNull();
    // The p90 falls to 1000 (30 % asks for 30): the share holds a whole period, then steps to 40.
    const better = viewersWorld({ "observed/BR/fra-1": seen(1000) });
    const low = compileAt(better, T0 + MIN, slow.map, 11);
    expect(low.map.countries.BR?.shed?.[0]?.share).toBe(50);
    expect(low.map.viewer_sheds?.BR?.["fra-1"]?.below_since).toBe(at(T0 + MIN));
    expect(low.nextShedStepAt).toBe(T0 + 2 * MIN);
    const held = compileAt(better, T0 + 2 * MIN - 1, low.map, 11);
    expect(held.map.countries.BR?.shed?.[0]?.share).toBe(50);
    const step = compileAt(better, T0 + 2 * MIN, held.map, 11);
    expect(step.map.countries.BR?.shed).toEqual([{ pool: "fra-1", share: 40, by: "viewers" }]);
    // Too few BR viewers left to judge: the observer deletes the key, the shed still steps down
    // one step per period rather than dropping at once.
    const gone = viewersWorld();
    const noObs = compileAt(gone, T0 + 2 * MIN + 1, step.map, 12);
    expect(noObs.map.countries.BR?.shed?.[0]?.share).toBe(40);
    const down = compileAt(gone, T0 + 3 * MIN + 1, noObs.map, 12);
    expect(down.map.countries.BR?.shed?.[0]?.share).toBe(30);
    // Still slow for the few who came back: shed again at once.
    const again = compileAt(
      viewersWorld({ "observed/BR/fra-1": seen(2100) }),
      T0 + 3 * MIN + 2,
      down.map,
      13,
    );
    expect(again.map.countries.BR?.shed?.[0]?.share).toBe(100);
  });

  it("stepped all the way down without an observation, BR follows the default route again", () => {
    let carried = compileAt(viewersWorld({ "observed/BR/fra-1": seen(1040) }), T0, null).map;
    expect(carried.viewer_sheds?.BR?.["fra-1"]?.share).toBe(20);
    carried = compileAt(viewersWorld(), T0 + 1, carried, 11).map;
    carried = compileAt(viewersWorld(), T0 + MIN + 1, carried, 11).map;
    expect(carried.viewer_sheds?.BR?.["fra-1"]?.share).toBe(10);
    carried = compileAt(viewersWorld(), T0 + 2 * MIN + 1, carried, 11).map;
    expect(carried.viewer_sheds).toBeUndefined();
    expect(carried.countries.BR).toBeUndefined();
  });

  it("hysteresis survives a KV round trip; KV's fall clock is never trusted", () => {
    const slow = compileAt(viewersWorld({ "observed/BR/fra-1": seen(1400) }), T0, null).map;
    const better = viewersWorld({ "observed/BR/fra-1": seen(1000) });
    const low = compileAt(better, T0 + MIN, slow, 11).map;
    expect(low.viewer_sheds?.BR?.["fra-1"]?.below_since).toBe(at(T0 + MIN));
    const fromKv = parseMap(serializeMap(low));
    expect(fromKv?.viewer_sheds?.BR?.["fra-1"]).toEqual({
      share: 50,
      at: at(T0),
      below_since: at(T0 + MIN),
    });
    const carried = carriedState({ kv: fromKv });
    expect(carried?.viewer_sheds?.BR?.["fra-1"]).toEqual({ share: 50, at: at(T0) });
    // A new pusher from KV alone: the share is kept, the fall clock starts again, so no step at
    // T0 + 2 min (the old pusher would have stepped then), but one period after the restart.
    const restarted = compileAt(better, T0 + 2 * MIN, carried as CompiledMap, 11).map;
    expect(restarted.countries.BR?.shed?.[0]?.share).toBe(50);
    const later = compileAt(better, T0 + 3 * MIN, restarted, 11).map;
    expect(later.countries.BR?.shed?.[0]?.share).toBe(40);
  });

  it("a takeover carries KV's viewer sheds of the same history over its own older view", () => {
    const kvMap = compileAt(viewersWorld({ "observed/BR/fra-1": seen(1400) }), T0, null, 20).map;
    // This process compiled before the observation arrived and saw none.
    const own = compileAt(viewersWorld({ "observed/BR/fra-1": seen(1400) }), T0, null, 20).map;
    const { viewer_sheds: _, ...ownBlind } = own;
    const seed = carriedState({ own: ownBlind, kv: kvMap });
    expect(seed?.viewer_sheds).toEqual({ BR: { "fra-1": { share: 50, at: at(T0) } } });
    // Same view: its own object, no copy.
    expect(carriedState({ own, kv: kvMap })).toBe(own);
  });

  it("never drains everything: a chain fully shed by viewers keeps its chain, all-pools-slow", () => {
    const both = viewersWorld({
      "pool/ams-1": { origin: "https://ams-1.example.net", slow_ms: SLOW, viewers: true },
      "observed/BR/fra-1": seen(3000),
      "observed/BR/ams-1": seen(2500),
    });
    const br = compileAt(both, T0, null).map.countries.BR;
    expect(br?.degraded).toBe("all-pools-slow");
    expect(br?.pool).toBe("fra-1");
    expect(br?.weights).toBeUndefined();
    expect(br?.shed).toBeUndefined();
    const alone = viewersWorld({
      "country/BR": { primary: "fra-1", fallbacks: [] },
      "observed/BR/fra-1": seen(3000),
    });
    const single = compileAt(alone, T0, null).map.countries.BR;
    expect(single?.degraded).toBe("all-pools-slow");
    expect(single?.pool).toBe("fra-1");
  });

  it("fences hold: a fenced country sheds only to pools inside its fence", () => {
    const fenced = {
      "pool/fra-1": {
        origin: "https://fra-1.example.net",
        region: "eu",
        slow_ms: SLOW,
        viewers: true,
      },
      "pool/ams-1": { origin: "https://ams-1.example.net", region: "eu" },
      "pool/us-1": { origin: "https://us-1.example.net", region: "us" },
      "health/fra-1": { status: "healthy" },
      "health/ams-1": { status: "healthy" },
      "health/us-1": { status: "healthy" },
      "country/_default": { primary: "us-1", fallbacks: [] },
      "fence/eu": { countries: ["DE"], continents: [], regions: ["eu"], floor: "ams-1" },
      epoch: "1",
    };
    const two = compileAt(
      {
        ...fenced,
        "country/DE": { primary: "fra-1", fallbacks: ["ams-1"] },
        "observed/DE/fra-1": seen(9000),
      },
      T0,
      null,
    ).map.countries.DE;
    expect(two?.fence).toBe("eu");
    expect(two?.weights).toEqual([{ pool: "ams-1", weight: 1000 }]);
    expect(two?.chain.map((c) => c.pool)).toEqual(["fra-1", "ams-1"]);
    const one = compileAt(
      {
        ...fenced,
        "country/DE": { primary: "fra-1", fallbacks: [] },
        "observed/DE/fra-1": seen(9000),
      },
      T0,
      null,
    ).map.countries.DE;
    expect(one?.degraded).toBe("all-pools-slow");
    expect(one?.chain.map((c) => c.pool)).toEqual(["fra-1"]);
    expect(one?.fence).toBe("eu");
  });

  it("junk carried from KV (a bad country, an unknown pool, a bad share) is not carried on", () => {
    const state = decodeSnapshot(snap(viewersWorld()), P);
    const carried = {
      viewer_sheds: {
        ZZ: { "fra-1": { share: 50, at: at(T0) } },
        BR: { "nope-1": { share: 50, at: at(T0) }, "fra-1": { share: 55, at: at(T0) } },
        US: { "fra-1": { share: 40, at: at(T0) } },
      },
    } as unknown as CompiledMap;
    const { sheds } = viewerSheds(state, carried, T0, MIN);
    expect([...sheds.keys()]).toEqual(["US"]);
    expect(sheds.get("US")?.get("fra-1")?.share).toBe(40);
  });
});
