import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CompiledMap,
  compile,
  parseMap,
  type Route,
  serializeMap,
} from "../../../core/index.js";
import { opts, snap, world } from "../../helpers/snapshot.js";

const POOLS = ["fra-1", "ams-1", "par-1"] as const;
const pools = (route: Route | undefined) => route?.chain.map((c) => c.pool);

/** A world step: `health` says which pools have a healthy `health/` key (the rest: none). */
function step(healthy: readonly string[], extra: Record<string, unknown> = {}) {
  const kv = world(extra);
  for (const p of POOLS) delete kv[`health/${p}`];
  for (const p of healthy) kv[`health/${p}`] = { status: "healthy" };
  return kv;
}

/** What a restarted pusher (or a new leader) passes as `previous`: the map as KV holds it. */
const throughKv = (map: CompiledMap): CompiledMap => {
  const parsed = parseMap(serializeMap(map));
  if (!parsed) throw new Error("KV copy did not parse");
  return parsed;
};

type Carry = (map: CompiledMap) => CompiledMap;

/** Compiles the steps in order, each with the previous map carried by `carry`. */
function sequence(steps: Record<string, unknown>[], carry: Carry, first: CompiledMap | null) {
  let previous = first;
  const maps: CompiledMap[] = [];
  steps.forEach((kv, i) => {
    const map = compile(snap(kv, 20 + i), opts({ carried: previous })).map;
    maps.push(map);
    previous = carry(map);
  });
  return maps;
}

const broken = { "country/DE": "{broken" };
const healSteps = [
  step(POOLS, broken), // (1) the rule turns invalid
  step(["ams-1", "par-1"], broken), // … fra-1's heartbeat restarts: its health key is gone
  step(POOLS, broken), // … and back
  step([], broken), // (2) every pool down
  step(POOLS, broken), // (3) all back
];

describe("last valid rule (docs/reference.md §3.4): heal after an invalid rule", () => {
  const carries: [string, Carry][] = [
    ["in memory", (m) => m],
    ["across pusher restarts (previous = the map parsed from KV JSON)", throughKv],
  ];
  it.each(carries)(
    "invalid rule, pool restart, all down, all back: on its primary (%s)",
    (_n, carry) => {
      const start = compile(snap(step(POOLS), 19), opts()).map;
      const [invalid, restarted, back, down, healed] = sequence(healSteps, carry, carry(start));

      expect(invalid?.countries.DE).toMatchObject({ pool: "fra-1", source: "country/DE" });
      expect(invalid?.problems).toContain("country/DE: invalid JSON");
      expect(invalid?.kept?.DE).toEqual({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] });

      expect(pools(restarted?.countries.DE)).toEqual(["ams-1", "par-1"]);
      // the old "last known good route" stayed on ams-1 here for good
      expect(pools(back?.countries.DE)).toEqual(["fra-1", "ams-1", "par-1"]);

      expect(down?.countries.DE).toMatchObject({
        pool: "par-1",
        source: "floor",
        degraded: "all-pools-unhealthy",
      });
      expect(down?.kept?.DE).toEqual({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] });

      expect(healed?.countries.DE).toEqual(start.countries.DE);
      expect(healed?.countries.DE?.degraded).toBeNull();
      expect(healed?.kept?.DE).toEqual({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] });
    },
  );

  it("an invalid _default heals the same way, and never becomes no-default-rule", () => {
    const bad = { "country/_default": "nope" };
    const start = compile(snap(step(POOLS), 19), opts()).map;
    const maps = sequence(
      [step(POOLS, bad), step([], bad), step(["par-1"], bad), step(POOLS, bad)],
      throughKv,
      throughKv(start),
    );
    expect(maps.map((m) => m.default.pool)).toEqual(["ams-1", "par-1", "par-1", "ams-1"]);
    expect(maps.map((m) => m.default.source)).toEqual([
      "country/_default",
      "floor",
      "country/_default",
      "country/_default",
    ]);
    expect(maps[1]?.default.degraded).toBe("all-pools-unhealthy");
    expect(maps[3]?.default).toEqual(start.default);
  });

  it("a pusher that restarts just after the rule broke still has it, even with a pool down at the time", () => {
    // Compiled while fra-1 was down: the route shows only part of the rule, so the map keeps it.
    const before = compile(snap(step(["ams-1", "par-1"]), 19), opts()).map;
    expect(pools(before.countries.DE)).toEqual(["ams-1", "par-1"]);
    expect(before.kept?.DE).toEqual({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] });
    // A new leader reads that map from KV; meanwhile DE broke and fra-1 came back.
    const after = compile(snap(step(POOLS, broken), 20), opts({ carried: throughKv(before) })).map;
    expect(after.countries.DE).toMatchObject({ pool: "fra-1", source: "country/DE" });
    expect(pools(after.countries.DE)).toEqual(["fra-1", "ams-1", "par-1"]);
  });

  it("a rule hidden by an override is kept, so it still routes once the override ends", () => {
    const boost = { "override/DE": { primary: "par-1", fallbacks: [], reason: "drill" } };
    const boosted = compile(snap(step(POOLS, boost), 19), opts()).map;
    expect(boosted.countries.DE?.source).toBe("override/DE");
    expect(boosted.kept?.DE).toEqual({ primary: "fra-1", fallbacks: ["ams-1", "par-1"] });
    const brokenUnder = compile(snap(step(POOLS, { ...boost, ...broken }), 20), {
      ...opts(),
      carried: throughKv(boosted),
    }).map;
    expect(brokenUnder.countries.DE?.source).toBe("override/DE");
    const ended = compile(snap(step(POOLS, broken), 21), opts({ carried: throughKv(brokenUnder) }));
    expect(ended.map.countries.DE).toMatchObject({ pool: "fra-1", source: "country/DE" });
  });

  it("a rule naming an undefined pool (dangling) is invalid too and routes by the last valid rule", () => {
    const start = compile(snap(step(POOLS), 19), opts()).map;
    const dangling = { "country/DE": { primary: "lon-1", fallbacks: ["par-1"] } };
    const map = compile(snap(step(POOLS, dangling), 20), opts({ carried: start })).map;
    expect(map.countries.DE).toEqual(start.countries.DE);
    expect(map.problems).toContain('country/DE: names undefined pool "lon-1"');
  });

  it("a deleted key forgets its rule: the country follows _default, also once re-added broken", () => {
    const kept = compile(snap(step(POOLS, broken), 20), opts({ carried: null })).map;
    expect(kept.countries.DE).toBeUndefined(); // never had a valid rule: left to _default
    const start = compile(snap(step(POOLS), 19), opts()).map;
    const invalid = compile(snap(step(POOLS, broken), 20), opts({ carried: start })).map;
    const gone = step(POOLS);
    delete gone["country/DE"];
    const deleted = compile(snap(gone, 21), opts({ carried: invalid })).map;
    expect(deleted.countries.DE).toBeUndefined();
    expect(deleted.kept).toBeUndefined();
    const again = compile(snap(step(POOLS, broken), 22), opts({ carried: deleted })).map;
    expect(again.countries.DE).toBeUndefined();
  });

  it("kept holds only the rules routes do not show: none while all is valid and healthy", () => {
    const map = compile(snap(step(POOLS), 19), opts()).map;
    expect(map.kept).toBeUndefined();
    expect(serializeMap(map)).not.toContain('"kept"');
    const healed = compile(
      snap(step(POOLS), 20),
      opts({ carried: sequence(healSteps, (m) => m, map).at(-1) ?? null }),
    );
    expect(healed.map.kept).toBeUndefined(); // the rule is valid again: nothing left to keep
  });
});

describe("last valid rule (property)", () => {
  it("while a rule stays invalid, its route is the valid rule's route under every health state", () => {
    const health = fc.subarray([...POOLS]);
    const arb = fc.record({
      before: health,
      steps: fc.array(fc.tuple(health, fc.boolean()), { minLength: 1, maxLength: 8 }),
    });
    fc.assert(
      fc.property(arb, ({ before, steps }) => {
        let previous: CompiledMap | null = compile(snap(step(before), 1), opts()).map;
        steps.forEach(([healthy, restart], i) => {
          const valid = compile(snap(step(healthy), 2 + i), opts()).map;
          const map = compile(snap(step(healthy, broken), 2 + i), opts({ carried: previous })).map;
          expect(map.countries.DE).toEqual(valid.countries.DE);
          expect(map.default).toEqual(valid.default);
          // a pusher restart between any two compiles changes nothing
          previous = restart ? throughKv(map) : map;
        });
      }),
      { numRuns: 200 },
    );
  });
});

describe("kept in the routes document", () => {
  it("is written after history, sorted, and read back by parseMap", () => {
    const map = compile(snap(step(["ams-1"], { ...broken, "country/FR": { primary: "par-1" } })), {
      ...opts(),
      carried: compile(snap(step(POOLS, { "country/FR": { primary: "par-1" } })), opts()).map,
    }).map;
    const text = serializeMap(map);
    expect(
      text.endsWith(
        ',"history":0,"kept":{"DE":{"primary":"fra-1","fallbacks":["ams-1","par-1"]},"FR":{"primary":"par-1","fallbacks":[]},"_default":{"primary":"ams-1","fallbacks":["par-1"]}}}',
      ),
    ).toBe(true);
    expect(parseMap(text)?.kept).toEqual(map.kept);
  });

  it("old maps without kept still parse, and a malformed kept never rejects the routes", () => {
    const map = compile(snap(step(POOLS)), opts()).map;
    const old = JSON.parse(serializeMap(map)) as Record<string, unknown>;
    delete old.history;
    expect(parseMap(JSON.stringify(old))?.countries.DE?.pool).toBe("fra-1");
    for (const junk of [5, "x", { DE: { primary: 1 } }, { DE: null }, [1, 2]]) {
      const parsed = parseMap(JSON.stringify({ ...old, kept: junk }));
      expect(parsed?.countries).toEqual(map.countries);
      expect(parsed?.kept).toBeUndefined();
    }
  });

  it("a previous map's kept rule that is not a valid rule is ignored", () => {
    const start = compile(snap(step(POOLS)), opts()).map;
    const forged: CompiledMap = {
      ...start,
      countries: {},
      kept: { DE: { primary: "NOT A POOL", fallbacks: ["fra-1"] } },
    };
    const map = compile(snap(step(POOLS, broken), 20), opts({ carried: forged })).map;
    expect(map.countries.DE).toBeUndefined();
  });
});
