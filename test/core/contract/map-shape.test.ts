import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type CompiledMap, parseMap, parseMapShape, serializeMap } from "../../../core/index.js";
import { mapShapeCases } from "../../cases/map-shape-cases.js";

/** What the Worker keeps of a zod-parsed map: all but `kept` and `sheds`, which only compile reads. */
function routingPart(map: CompiledMap | null): CompiledMap | null {
  if (!map) return null;
  const { kept: _kept, sheds: _sheds, ...rest } = map;
  return rest;
}

const ORIGIN = "https://fra-1.origin.example.com";
const GOOD = serializeMap({
  v: 1,
  rev: 50,
  epoch: 1,
  compiled_at: "2026-01-01T00:00:00.000Z",
  default: {
    pool: "fra-1",
    origin: ORIGIN,
    chain: [{ pool: "fra-1", origin: ORIGIN }],
    source: "country/_default",
    degraded: null,
  },
  countries: {},
  problems: [],
  history: 0,
});

describe("shared map-shape cases: the Worker's check agrees with the pusher's zod schema", () => {
  it.each(mapShapeCases(GOOD))("$name", (c) => {
    const shape = parseMapShape(c.text);
    expect(shape).toEqual(routingPart(parseMap(c.text)));
    if (c.verdict.kind === "rejected") {
      expect(shape).toBeNull();
      return;
    }
    expect(shape?.rev).toBe(c.verdict.rev);
    expect(shape?.default.weights !== undefined).toBe(c.verdict.weighted);
    expect(shape?.default.shed?.[0]?.share ?? null).toBe(c.verdict.shed);
    expect(shape?.default.shed?.[0]?.by).toBe(c.verdict.shedBy);
    expect(shape?.default.degraded).toBe(c.verdict.degraded);
  });
});

/** A map with every feature: countries, weights, sheds, a degraded route, problems, kept rules. */
const RICH: CompiledMap = {
  v: 1,
  rev: 9,
  epoch: 3,
  compiled_at: "2026-01-01T00:00:00.000Z",
  default: {
    pool: "ams-1",
    origin: "https://ams-1.origin.example.com",
    chain: [
      { pool: "ams-1", origin: "https://ams-1.origin.example.com" },
      { pool: "par-1", origin: "http://127.0.0.1:9103" },
    ],
    source: "country/_default",
    degraded: null,
  },
  countries: {
    DE: {
      pool: "fra-1",
      origin: ORIGIN,
      chain: [
        { pool: "fra-1", origin: ORIGIN },
        { pool: "ams-1", origin: "https://ams-1.origin.example.com" },
      ],
      source: "continent/EU",
      degraded: null,
      weights: [
        { pool: "fra-1", weight: 80 },
        { pool: "ams-1", weight: 20 },
      ],
    },
    FR: {
      pool: "fra-1",
      origin: ORIGIN,
      chain: [
        { pool: "fra-1", origin: ORIGIN },
        { pool: "ams-1", origin: "https://ams-1.origin.example.com" },
      ],
      source: "country/FR",
      degraded: null,
      weights: [
        { pool: "fra-1", weight: 600 },
        { pool: "ams-1", weight: 400 },
      ],
      shed: [{ pool: "fra-1", share: 40 }],
    },
    PL: {
      pool: "war-1",
      origin: "https://war-1.origin.example.com",
      chain: [{ pool: "war-1", origin: "https://war-1.origin.example.com" }],
      source: "country/PL",
      degraded: "all-pools-slow",
    },
    IT: {
      pool: "par-1",
      origin: "http://127.0.0.1:9103",
      chain: [{ pool: "par-1", origin: "http://127.0.0.1:9103" }],
      source: "floor",
      degraded: "all-pools-unhealthy",
    },
  },
  problems: ["country/XX: not JSON"],
  history: 2,
  kept: { IT: { primary: "mil-1", fallbacks: [] }, FR: { primary: "fra-1", fallbacks: ["ams-1"] } },
  sheds: {
    "fra-1": {
      share: 40,
      at: "2026-01-01T00:00:00.000Z",
      below_since: "2026-01-01T00:00:30.000Z",
    },
  },
};

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/** Every path to a value inside `doc` (object keys and array indexes). */
function pathsOf(doc: Json, at: (string | number)[] = []): (string | number)[][] {
  const out = [at];
  if (Array.isArray(doc)) for (const [i, v] of doc.entries()) out.push(...pathsOf(v, [...at, i]));
  else if (doc !== null && typeof doc === "object")
    for (const [k, v] of Object.entries(doc)) out.push(...pathsOf(v, [...at, k]));
  return out;
}

/** `doc` with the value at `path` replaced (`undefined`: removed). */
function mutate(doc: Json, path: (string | number)[], value: Json | undefined): Json {
  const [head, ...rest] = path;
  if (head === undefined) return value === undefined ? null : value;
  if (Array.isArray(doc) && typeof head === "number") {
    const copy = [...doc];
    if (rest.length === 0 && value === undefined) copy.splice(head, 1);
    else copy[head] = mutate(doc[head] ?? null, rest, value);
    return copy;
  }
  if (doc !== null && typeof doc === "object" && !Array.isArray(doc)) {
    const copy = { ...doc };
    if (rest.length === 0 && value === undefined) delete copy[String(head)];
    else copy[String(head)] = mutate(doc[String(head)] ?? null, rest, value);
    return copy;
  }
  return doc;
}

/** Values a damaged or foreign document might hold where a field should be. */
const ODD: fc.Arbitrary<Json | undefined> = fc.oneof(
  fc.constantFrom<Json | undefined>(
    undefined,
    null,
    "",
    " ",
    0,
    -1,
    1.5,
    1001,
    2 ** 53,
    "1",
    [],
    {},
    "stale-map",
    "all-pools-unhealthy",
    " https://x.example ",
    "http://",
    "ftp://x",
    "javascript:alert(1)",
  ),
  fc.jsonValue() as fc.Arbitrary<Json>,
);

describe("mutated maps: the Worker's check agrees with the pusher's zod schema", () => {
  const rich = JSON.parse(serializeMap(RICH)) as Json;
  const paths = pathsOf(rich);

  it("one field replaced or removed anywhere", () => {
    fc.assert(
      fc.property(fc.nat(paths.length - 1), ODD, (i, value) => {
        const text = JSON.stringify(mutate(rich, paths[i] ?? [], value));
        expect(parseMapShape(text)).toEqual(routingPart(parseMap(text)));
      }),
      { numRuns: 3000 },
    );
  });

  it("several fields at once", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(paths.length - 1), ODD), { maxLength: 4 }), (edits) => {
        let doc = rich;
        for (const [i, value] of edits) doc = mutate(doc, paths[i] ?? [], value);
        const text = JSON.stringify(doc);
        expect(parseMapShape(text)).toEqual(routingPart(parseMap(text)));
      }),
      { numRuns: 1000 },
    );
  });

  it("the rich map itself parses the same, weights and all", () => {
    const text = serializeMap(RICH);
    expect(parseMapShape(text)).toEqual(routingPart(parseMap(text)));
    expect(parseMapShape(text)?.countries.DE?.weights).toHaveLength(2);
    expect(parseMapShape(text)?.countries.FR?.shed).toEqual([{ pool: "fra-1", share: 40 }]);
    expect(parseMap(text)?.sheds).toEqual(RICH.sheds);
  });
});
