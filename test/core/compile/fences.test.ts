import { describe, expect, it } from "vitest";
import {
  type CompiledMap,
  compile,
  decodeSnapshot,
  FenceSchema,
  fenceCover,
  parseMap,
  parseMapShape,
  serializeMap,
} from "../../../core/index.js";
import { opts, P, snap } from "../../helpers/snapshot.js";

const EU = {
  countries: ["CH"],
  continents: ["EU"],
  regions: ["eu-central", "eu-west"],
  floor: "par-1",
};

/** EU pools fra-1, ams-1, par-1 (par-1 is also FLOOR_POOL); US pools use-1, usw-2; lab-1 has no region. */
function fenced(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    "pool/fra-1": { origin: "https://fra-1.example.net", region: "eu-central" },
    "pool/ams-1": { origin: "https://ams-1.example.net", region: "eu-west" },
    "pool/par-1": { origin: "https://par-1.example.net", region: "eu-west" },
    "pool/use-1": { origin: "https://use-1.example.net", region: "us-east" },
    "pool/usw-2": { origin: "https://usw-2.example.net", region: "us-west" },
    "pool/lab-1": { origin: "https://lab-1.example.net" },
    "health/fra-1": { status: "healthy" },
    "health/ams-1": { status: "healthy" },
    "health/par-1": { status: "healthy" },
    "health/use-1": { status: "healthy" },
    "health/usw-2": { status: "healthy" },
    "health/lab-1": { status: "healthy" },
    "country/_default": { primary: "use-1", fallbacks: ["par-1"] },
    "continent/EU": { primary: "fra-1", fallbacks: ["ams-1"] },
    "fence/eu": EU,
    epoch: "3",
    ...extra,
  };
}

/** {@link fenced} without some keys. */
function without(kv: Record<string, unknown>, ...keys: string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(kv).filter(([k]) => !keys.includes(k)));
}

const run = (kv: Record<string, unknown>, extra: Parameters<typeof opts>[0] = {}) =>
  compile(snap(kv), opts(extra));
const pools = (m: CompiledMap, cc: string) => m.countries[cc]?.chain.map((c) => c.pool);

describe("fence/{name} values", () => {
  it("decodes a fence into the routing state", () => {
    const state = decodeSnapshot(snap({ "fence/eu": EU }), P);
    expect(state.fences.get("eu")).toEqual(EU);
    expect(state.problems.filter((p) => p.key.startsWith("fence/"))).toEqual([]);
  });

  it.each([
    ["no regions", { ...EU, regions: [] }, "regions: at least 1 region"],
    ["a bad country", { ...EU, countries: ["ZZ"] }, "countries[0]: not an ISO 3166-1 alpha-2 code"],
    ["a bad continent", { ...EU, continents: ["XX"] }, "continents[0]"],
    ["a bad floor", { ...EU, floor: "Par_1" }, "floor: not a valid pool name (a DNS label)"],
    ["an unknown field", { ...EU, pools: [] }, 'unknown field "pools"'],
    ["a repeated region", { ...EU, regions: ["eu-west", "eu-west"] }, "lists an item twice"],
  ])("reports %s on the key", (_name, value, message) => {
    const state = decodeSnapshot(snap({ "fence/eu": value }), P);
    expect(state.fences.has("eu")).toBe(false);
    expect(state.invalidFences.has("eu")).toBe(true);
    const p = state.problems.find((x) => x.key === "fence/eu");
    expect(p?.code).toBe("invalid-value");
    expect(p?.message).toContain(message);
  });

  it("reports a fence name that is not a DNS label", () => {
    const state = decodeSnapshot(snap({ "fence/EU zone": EU }), P);
    expect(state.fences.size).toBe(0);
    expect(state.problems[0]?.message).toBe("not a valid fence name (a DNS label)");
  });

  it("a country in two fences stays with the first name in sort order, and says so", () => {
    const a = FenceSchema.parse({ countries: ["CH", "DE"], regions: ["x"], floor: "p" });
    const b = FenceSchema.parse({ continents: ["EU"], regions: ["y"], floor: "q" });
    const cover = fenceCover(
      new Map([
        ["zz", b],
        ["alps", a],
      ]),
    );
    expect(cover.byCountry.get("CH")?.name).toBe("alps");
    expect(cover.byCountry.get("FR")?.name).toBe("zz");
    expect(cover.problems).toEqual([
      {
        key: "fence/zz",
        code: "fence-overlap",
        message:
          "overlaps fence alps on CH, DE: a country belongs to one fence; fence alps (first in sort order) keeps them",
      },
    ]);
  });
});

describe("compile with a fence", () => {
  it("covers listed countries and every country of its continents, each with its own route", () => {
    const { map, problems } = run(fenced());
    expect(problems).toEqual([]);
    expect(map.countries.DE).toMatchObject({ pool: "fra-1", source: "continent/EU", fence: "eu" });
    expect(map.countries.CH?.fence).toBe("eu");
    expect(map.default.fence).toBeUndefined();
    expect(map.countries.US).toBeUndefined();
  });

  it("a fenced country that follows _default gets its own fenced route", () => {
    const { map, problems } = run(
      without(
        fenced({ "fence/eu": { ...EU, continents: [], countries: ["CH", "IS"] } }),
        "continent/EU",
      ),
    );
    // _default names use-1 (us-east): invalid for CH and IS, which fall to the fence's floor.
    expect(map.countries.CH).toMatchObject({
      pool: "par-1",
      source: "floor",
      degraded: "all-pools-unhealthy",
      fence: "eu",
    });
    expect(
      problems.map((p) => `${p.key}: ${p.message}`),
      JSON.stringify(problems),
    ).toContain(
      "country/_default: would send CH to pool use-1, outside fence eu (regions eu-central, eu-west); ignored for CH",
    );
    expect(map.default.pool).toBe("use-1");
  });

  it.each([
    ["a country rule", "country/DE", { primary: "use-1", fallbacks: ["fra-1"] }],
    ["an override (boost)", "override/DE", { primary: "use-1", reason: "boost" }],
    [
      "a percentage boost",
      "override/DE",
      { primary: "fra-1", fallbacks: ["ams-1", "use-1"], weights: { "fra-1": 80, "use-1": 20 } },
    ],
    [
      "a rule naming a pool without a region",
      "country/DE",
      { primary: "fra-1", fallbacks: ["lab-1"] },
    ],
  ])("%s that crosses the fence is invalid for the country and reported", (_n, key, rule) => {
    const { map, problems } = run(fenced({ [key]: rule }));
    expect(map.countries.DE).toMatchObject({ pool: "fra-1", source: "continent/EU", fence: "eu" });
    expect(map.countries.DE?.weights).toBeUndefined();
    const crossing = problems.find((p) => p.code === "fence-crossing");
    expect(crossing?.key).toBe(key);
    expect(crossing?.message).toMatch(/^would send DE to pool (use-1|lab-1), outside fence eu/);
  });

  it("a crossing country rule routes by the last valid one", () => {
    const first = run(fenced({ "country/DE": { primary: "ams-1", fallbacks: ["fra-1"] } })).map;
    const { map } = run(fenced({ "country/DE": { primary: "use-1" } }), { carried: first });
    expect(map.countries.DE).toMatchObject({ pool: "ams-1", source: "country/DE", fence: "eu" });
    expect(map.kept?.DE).toEqual({ primary: "ams-1", fallbacks: ["fra-1"] });
  });

  it("a crossing continent override leaves the fenced countries to the continent rule", () => {
    const { map } = run(fenced({ "override/EU": { primary: "usw-2", reason: "boost" } }));
    expect(map.countries.FR).toMatchObject({ pool: "fra-1", source: "continent/EU" });
  });

  it("an unhealthy fence falls to the fence's floor, never FLOOR_POOL outside it", () => {
    const down = { status: "unhealthy" };
    const kv = fenced({
      "health/fra-1": down,
      "health/ams-1": down,
      "fence/eu": { ...EU, floor: "ams-1" },
    });
    const { map } = run(kv, { floorPool: "use-1" });
    expect(map.countries.DE).toMatchObject({
      pool: "ams-1",
      chain: [{ pool: "ams-1", origin: "https://ams-1.example.net" }],
      degraded: "all-pools-unhealthy",
      fence: "eu",
    });
    expect(map.problems).toContain(
      "fence/eu: FLOOR_POOL use-1 is outside the fence: a Worker with no map would serve its countries there",
    );
  });

  it("a floor outside the fence is reported and replaced by the first healthy in-fence pool", () => {
    const down = { status: "unhealthy" };
    const kv = fenced({ "health/fra-1": down, "fence/eu": { ...EU, floor: "use-1" } });
    const { map, problems } = run(kv);
    expect(pools(map, "DE")).toEqual(["ams-1"]);
    expect(map.countries.DE?.degraded).toBeNull();
    const down2 = run(
      fenced({ "health/fra-1": down, "health/ams-1": down, "fence/eu": { ...EU, floor: "use-1" } }),
    );
    expect(pools(down2.map, "DE")).toEqual(["par-1"]);
    expect(problems.find((p) => p.code === "fence-floor")?.message).toBe(
      "floor use-1 is outside the fence; its countries fall to the first in-fence pool instead",
    );
  });

  it("with no pool inside the fence the route is fence-unsatisfiable, never outside", () => {
    const kv = fenced({ "fence/eu": { ...EU, regions: ["mars"], floor: "use-1" } });
    const { map } = run(kv);
    expect(map.countries.DE).toMatchObject({ degraded: "fence-unsatisfiable", fence: "eu" });
    // Both parsers take it (the Worker answers it with 503: test/worker/fences.test.ts).
    const text = serializeMap(map);
    expect(parseMap(text)?.countries.DE).toEqual(map.countries.DE);
    expect(parseMapShape(text)?.countries.DE).toEqual(map.countries.DE);
  });

  it("drops outside pools from the weights a rule keeps", () => {
    const { map } = run(
      fenced({
        "country/DE": {
          primary: "fra-1",
          fallbacks: ["ams-1"],
          weights: { "fra-1": 70, "ams-1": 30 },
        },
      }),
    );
    expect(map.countries.DE?.weights).toEqual([
      { pool: "fra-1", weight: 70 },
      { pool: "ams-1", weight: 30 },
    ]);
  });

  it("serializes and reads back the fence", () => {
    const { map } = run(fenced());
    const text = serializeMap(map);
    expect(text).toContain('"source":"continent/EU","degraded":null,"fence":"eu"}');
    expect(parseMap(text)?.countries.DE?.fence).toBe("eu");
  });

  it("a fence whose value turns invalid keeps its last valid value, across a restart", () => {
    const first = run(fenced({ "country/DE": { primary: "use-1" } })).map;
    expect(first.fences?.eu).toEqual(EU);
    // The map read back from KV (a restart) carries the fence; the key is now junk.
    const back = parseMap(serializeMap(first));
    const { map, problems } = run(fenced({ "country/DE": { primary: "use-1" }, "fence/eu": "{" }), {
      carried: back,
    });
    expect(problems.find((p) => p.key === "fence/eu")?.code).toBe("invalid-json");
    expect(map.countries.DE).toMatchObject({ pool: "fra-1", fence: "eu" });
    expect(map.fences?.eu).toEqual(EU);
    // Deleting the key lifts the fence.
    const lifted = run(without(fenced({ "country/DE": { primary: "use-1" } }), "fence/eu"), {
      carried: map,
    }).map;
    expect(lifted.countries.DE).toMatchObject({ pool: "use-1" });
    expect(lifted.fences).toBeUndefined();
  });
});
