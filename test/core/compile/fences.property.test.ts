import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CompiledMap,
  compile,
  countriesOf,
  type Fence,
  parseMap,
  serializeMap,
} from "../../../core/index.js";
import { opts, snap } from "../../helpers/snapshot.js";

/** Pools and their regions: three inside the fence, two outside it, one with no region. */
const REGION: Readonly<Record<string, string | undefined>> = {
  "fra-1": "eu-central",
  "ams-1": "eu-west",
  "par-1": "eu-west",
  "use-1": "us-east",
  "sin-1": "ap-south",
  "lab-1": undefined,
};
const POOLS = Object.keys(REGION);
const FENCE: Fence = {
  countries: ["CH"],
  continents: ["EU"],
  regions: ["eu-central", "eu-west"],
  floor: "par-1",
};
const FENCED = new Set(["CH", ...countriesOf("EU")]);
const TARGETS = ["DE", "FR", "CH", "US", "_default"];

const pool = fc.constantFrom(...POOLS);
/** A rule over distinct pools, weighted or not (a percentage boost is a weighted override). */
const rule = fc
  .uniqueArray(pool, { minLength: 1, maxLength: 4 })
  .chain((ps) =>
    fc.record({
      primary: fc.constant(ps[0] as string),
      fallbacks: fc.constant(ps.slice(1)),
      weights: fc.option(
        fc
          .tuple(...ps.map(() => fc.integer({ min: 0, max: 100 })))
          .map((ws) => Object.fromEntries(ps.map((p, i) => [p, ws[i] as number]))),
        { nil: undefined },
      ),
    }),
  )
  .map((r) => (r.weights ? r : { primary: r.primary, fallbacks: r.fallbacks }));

const intent = fc.record({
  countries: fc.dictionary(fc.constantFrom(...TARGETS), rule),
  overrides: fc.dictionary(fc.constantFrom(...TARGETS, "EU"), rule),
  continent: fc.option(rule, { nil: undefined }),
  health: fc.dictionary(pool, fc.constantFrom("healthy", "healthy", "draining", "unhealthy")),
  floor: pool,
  floorPool: pool,
  expired: fc.boolean(),
});

type Intent = typeof intent extends fc.Arbitrary<infer T> ? T : never;

function kvOf(x: Intent): Record<string, unknown> {
  const kv: Record<string, unknown> = { "fence/eu": { ...FENCE, floor: x.floor }, epoch: "1" };
  for (const p of POOLS) {
    const region = REGION[p];
    kv[`pool/${p}`] = { origin: `https://${p}.example.net`, ...(region ? { region } : {}) };
  }
  for (const [p, status] of Object.entries(x.health)) kv[`health/${p}`] = { status };
  for (const [cc, r] of Object.entries(x.countries)) kv[`country/${cc}`] = r;
  const expires_at = x.expired ? "2026-11-29T14:00:00.000Z" : "2026-11-29T16:00:00.000Z";
  for (const [cc, r] of Object.entries(x.overrides))
    kv[`override/${cc}`] = { ...r, reason: "boost", expires_at };
  if (x.continent) kv["continent/EU"] = x.continent;
  return kv;
}

const inside = (p: string) => {
  const r = REGION[p];
  return r !== undefined && FENCE.regions.includes(r);
};

/** Every pool a fenced country's route can send a viewer to lies inside the fence. */
function assertFenced(map: CompiledMap): void {
  for (const cc of FENCED) {
    const route = map.countries[cc];
    expect(route, cc).toBeDefined();
    if (!route) continue;
    expect(route.fence).toBe("eu");
    if (route.degraded === "fence-unsatisfiable") throw new Error("the fence has pools inside");
    expect(
      route.chain.map((c) => c.pool).filter((p) => !inside(p)),
      cc,
    ).toEqual([]);
    expect(inside(route.pool), cc).toBe(true);
    expect(
      (route.weights ?? []).map((w) => w.pool).filter((p) => !inside(p)),
      cc,
    ).toEqual([]);
  }
}

describe("fences (property)", () => {
  it("no fenced country's route, chain or weights ever holds a pool outside its fence", () => {
    fc.assert(
      fc.property(intent, intent, (a, b) => {
        // Two compiles in a row: the second may route invalid rules by the first's kept ones.
        const first = compile(snap(kvOf(a)), opts({ floorPool: a.floorPool })).map;
        assertFenced(first);
        const second = compile(
          snap(kvOf({ ...b, countries: { ...b.countries, ...a.countries } }), 11),
          opts({ floorPool: b.floorPool, carried: parseMap(serializeMap(first)) }),
        ).map;
        assertFenced(second);
        // Unfenced countries are untouched by the fence.
        expect(second.countries.US?.fence).toBeUndefined();
        expect(second.default.fence).toBeUndefined();
      }),
      { numRuns: 400 },
    );
  });

  it("when no pool inside the fence is healthy, the fenced country is on an in-fence floor", () => {
    fc.assert(
      fc.property(intent, (x) => {
        const health: Intent["health"] = {};
        for (const p of POOLS) health[p] = inside(p) ? "unhealthy" : "healthy";
        const map = compile(snap(kvOf({ ...x, health })), opts({ floorPool: x.floorPool })).map;
        assertFenced(map);
        for (const cc of FENCED) {
          expect(map.countries[cc]?.degraded).toBe("all-pools-unhealthy");
          expect(map.countries[cc]?.chain).toHaveLength(1);
          if (inside(x.floor)) expect(map.countries[cc]?.pool).toBe(x.floor);
        }
      }),
      { numRuns: 200 },
    );
  });
});
