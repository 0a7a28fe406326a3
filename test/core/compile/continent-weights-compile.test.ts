import { describe, expect, it } from "vitest";
import {
  type CompiledMap,
  compile,
  countriesOf,
  parseMap,
  resolveRoute,
  serializeMap,
} from "../../../core/index.js";
import { opts, snap, world } from "../../helpers/snapshot.js";

const run = (kv: Record<string, unknown>, extra: Parameters<typeof opts>[0] = {}) =>
  compile(snap(kv), opts(extra));
const through = (m: CompiledMap): CompiledMap => {
  const p = parseMap(serializeMap(m));
  if (!p) throw new Error("map did not parse");
  return p;
};
const eu = { primary: "par-1", fallbacks: ["ams-1"] };
const later = "2026-11-29T17:00:00.000Z";
const earlier = "2026-11-29T14:00:00.000Z";

describe("continent rules (docs/reference.md §3.1)", () => {
  it("compiles continent/EU into every European country without its own rule", () => {
    const { map, problems } = run(world({ "continent/EU": eu }));
    expect(problems).toEqual([]);
    for (const cc of countriesOf("EU")) {
      const want = cc === "DE" ? "country/DE" : "continent/EU";
      expect(map.countries[cc]?.source, cc).toBe(want);
    }
    expect(map.countries.FR).toMatchObject({ pool: "par-1", source: "continent/EU" });
    expect(map.countries.FR?.chain.map((c) => c.pool)).toEqual(["par-1", "ams-1"]);
    expect(map.countries.US).toBeUndefined();
    expect(resolveRoute(map, "US").source).toBe("country/_default");
    expect(map.kept).toBeUndefined();
  });

  it("resolves override/CC → country/CC → override/K → continent/K → _default", () => {
    const kv = world({
      "continent/EU": eu,
      "override/EU": { primary: "ams-1", fallbacks: [], reason: "eu drill" },
      "override/DE": { primary: "par-1", fallbacks: [] },
      "country/FR": { primary: "fra-1", fallbacks: [] },
    });
    const { map } = run(kv);
    expect(map.countries.DE?.source).toBe("override/DE");
    expect(map.countries.FR?.source).toBe("country/FR");
    expect(map.countries.IT).toMatchObject({ pool: "ams-1", source: "override/EU" });
    expect(resolveRoute(map, "BR").source).toBe("country/_default");
    // Without the continent override, the continent rule decides; without that, _default.
    const { "override/EU": _o, ...noOverride } = kv;
    expect(run(noOverride).map.countries.IT?.source).toBe("continent/EU");
    const { "continent/EU": _c, ...neither } = noOverride;
    expect(resolveRoute(run(neither).map, "IT").source).toBe("country/_default");
  });

  it("override/NA is Namibia; override/continent/NA is North America", () => {
    const na = { primary: "fra-1", fallbacks: [] };
    const country = run(world({ "override/NA": na })).map;
    expect(country.countries.NA?.source).toBe("override/NA");
    expect(country.countries.US).toBeUndefined();
    const continent = run(world({ "override/continent/NA": na, "continent/NA": eu })).map;
    expect(continent.countries.US?.source).toBe("override/continent/NA");
    expect(continent.countries.CA?.source).toBe("override/continent/NA");
    expect(continent.countries.NA).toBeUndefined();
  });

  it("XX and T1 never take a continent rule", () => {
    const { map } = run(world({ "continent/EU": eu, "continent/NA": eu }));
    expect(map.countries.XX).toBeUndefined();
    expect(map.countries.T1).toBeUndefined();
  });

  it("ignores a continent override whose expires_at has passed", () => {
    const o = (at: string) => ({ primary: "ams-1", fallbacks: [], expires_at: at });
    expect(
      run(world({ "continent/EU": eu, "override/EU": o(later) })).map.countries.IT?.source,
    ).toBe("override/EU");
    expect(
      run(world({ "continent/EU": eu, "override/EU": o(earlier) })).map.countries.IT?.source,
    ).toBe("continent/EU");
  });

  it("reports an invalid or dangling continent rule by its key", () => {
    expect(run(world({ "country/EU": eu })).map.problems).toContain(
      "country/EU: a continent code: continent rules live under continent/",
    );
    expect(run(world({ "continent/ZZ": eu })).map.problems).toContain(
      "continent/ZZ: not a continent code (AF AN AS EU NA OC SA)",
    );
    const dangling = run(world({ "continent/EU": { primary: "lon-9", fallbacks: [] } })).map;
    expect(dangling.problems).toContain('continent/EU: names undefined pool "lon-9"');
    expect(dangling.countries.FR).toBeUndefined();
  });

  it("a country whose invalid rule never had a valid one follows its continent", () => {
    const { map } = run(world({ "continent/EU": eu, "country/FR": "{broken" }));
    expect(map.countries.FR?.source).toBe("continent/EU");
  });

  it("an invalid continent rule routes by its last valid rule, across a KV round trip", () => {
    const good = run(world({ "continent/EU": eu })).map;
    const broken = run(world({ "continent/EU": "{broken" }), { carried: through(good) }).map;
    expect(broken.countries.FR).toMatchObject({ pool: "par-1", source: "continent/EU" });
    expect(broken.kept?.["continent/EU"]).toEqual(eu);
    const again = run(world({ "continent/EU": "{broken" }), { carried: through(broken) }).map;
    expect(again.countries.IT?.chain.map((c) => c.pool)).toEqual(["par-1", "ams-1"]);
  });
});

describe("weights (docs/reference.md §3.5)", () => {
  const weighted = {
    primary: "fra-1",
    fallbacks: ["ams-1", "par-1"],
    weights: { "fra-1": 80, "ams-1": 20 },
  };

  it("lists the healthy weighted pools in chain order", () => {
    const { map, problems } = run(world({ "country/DE": weighted }));
    expect(problems).toEqual([]);
    expect(map.countries.DE?.weights).toEqual([
      { pool: "fra-1", weight: 80 },
      { pool: "ams-1", weight: 20 },
    ]);
    expect(map.countries.DE?.chain.map((c) => c.pool)).toEqual(["fra-1", "ams-1", "par-1"]);
    expect(map.default.weights).toBeUndefined();
  });

  it("drops unhealthy and zero-weight pools; omits weights when none is healthy", () => {
    const zero = { ...weighted, weights: { "fra-1": 80, "ams-1": 20, "par-1": 0 } };
    const down = run(world({ "country/DE": zero, "health/fra-1": { status: "draining" } })).map;
    expect(down.countries.DE?.weights).toEqual([{ pool: "ams-1", weight: 20 }]);
    const none = run(
      world({
        "country/DE": weighted,
        "health/fra-1": { status: "unhealthy" },
        "health/ams-1": { status: "unhealthy" },
      }),
    ).map;
    expect(none.countries.DE?.pool).toBe("par-1");
    expect(none.countries.DE?.weights).toBeUndefined();
  });

  it("carries weights on continent rules and percent overrides", () => {
    const { map } = run(
      world({
        "continent/EU": { ...eu, weights: { "par-1": 3, "ams-1": 1 } },
        "override/DE": { ...weighted, expires_at: later },
      }),
    );
    expect(map.countries.FR?.weights).toEqual([
      { pool: "par-1", weight: 3 },
      { pool: "ams-1", weight: 1 },
    ]);
    expect(map.countries.DE?.source).toBe("override/DE");
    expect(map.countries.DE?.weights?.map((w) => w.pool)).toEqual(["fra-1", "ams-1"]);
  });

  it.each([
    [{ "lon-1": 5 }, "country/DE: weights: names a pool that is not the primary or a fallback"],
    [{ "fra-1": 1001 }, "country/DE: weights: each weight must be an integer 0–1000"],
    [{ "fra-1": 1.5 }, "country/DE: weights: each weight must be an integer 0–1000"],
    [{ "fra-1": -1 }, "country/DE: weights: each weight must be an integer 0–1000"],
  ])("rejects weights %j", (weights, message) => {
    const { map } = run(
      world({ "country/DE": { primary: "fra-1", fallbacks: ["ams-1"], weights } }),
    );
    expect(map.problems).toContain(message);
    expect(resolveRoute(map, "DE").source).toBe("country/_default");
  });

  it("a kept weighted rule keeps its weights and heals when the pool recovers (through KV)", () => {
    const sick = run(
      world({ "country/DE": weighted, "health/ams-1": { status: "unhealthy" } }),
    ).map;
    expect(sick.kept?.DE).toEqual(weighted);
    const invalid = run(world({ "country/DE": "{broken" }), { carried: through(sick) }).map;
    expect(invalid.countries.DE?.weights).toEqual([
      { pool: "fra-1", weight: 80 },
      { pool: "ams-1", weight: 20 },
    ]);
    // Shown whole: not kept, and still readable off the route after another restart.
    const whole = run(world({ "country/DE": weighted })).map;
    expect(whole.kept).toBeUndefined();
    const next = run(world({ "country/DE": "{broken" }), { carried: through(whole) }).map;
    expect(next.countries.DE?.weights?.map((w) => w.weight)).toEqual([80, 20]);
  });

  it("serializes weights after degraded and parses them back; junk weights make a route unweighted", () => {
    const { map } = run(world({ "country/DE": weighted }));
    const text = serializeMap(map);
    expect(text).toContain(
      '"degraded":null,"weights":[{"pool":"fra-1","weight":80},{"pool":"ams-1","weight":20}]',
    );
    expect(parseMap(text)?.countries.DE?.weights).toEqual(map.countries.DE?.weights);
    const junk = text.replace('"weight":80', '"weight":"lots"');
    const parsed = parseMap(junk);
    expect(parsed?.countries.DE?.pool).toBe("fra-1");
    expect(parsed?.countries.DE?.weights).toBeUndefined();
  });
});
