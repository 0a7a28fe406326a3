import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CompiledMap,
  type Route,
  routeText,
  routingText,
  serializeMap,
} from "../../../core/index.js";

/**
 * The document `serializeMap` must write, built the plain way: one `JSON.stringify` of objects in
 * docs/reference.md §3's field order. The serializer assembles the same text from per-route pieces.
 */
function reference(map: CompiledMap): string {
  const route = (r: Route) => ({
    pool: r.pool,
    origin: r.origin,
    chain: r.chain.map((c) => ({ pool: c.pool, origin: c.origin })),
    source: r.source,
    degraded: r.degraded,
    ...(r.weights?.length
      ? { weights: r.weights.map((w) => ({ pool: w.pool, weight: w.weight })) }
      : {}),
    ...(r.shed?.length ? { shed: r.shed.map((x) => ({ pool: x.pool, share: x.share })) } : {}),
    ...sortedAttrs(r.attrs),
    ...(r.fence !== undefined ? { fence: r.fence } : {}),
  });
  const sortedAttrs = (a: Readonly<Record<string, string>> | undefined) => {
    const names = a ? Object.keys(a).sort() : [];
    return a && names.length ? { attrs: Object.fromEntries(names.map((n) => [n, a[n]])) } : {};
  };
  const sortedBy = <T, U>(rec: Readonly<Record<string, T>> | undefined, f: (v: T) => U) =>
    rec && Object.keys(rec).length
      ? Object.fromEntries(
          Object.keys(rec)
            .sort()
            .map((k) => [k, f(rec[k] as T)]),
        )
      : undefined;
  const kept = sortedBy(map.kept, (k) => ({
    primary: k.primary,
    fallbacks: [...k.fallbacks],
    ...(k.weights && Object.keys(k.weights).length
      ? {
          weights: Object.fromEntries(
            [k.primary, ...k.fallbacks].flatMap((p) =>
              k.weights?.[p] === undefined ? [] : [[p, k.weights[p]]],
            ),
          ),
        }
      : {}),
    ...sortedAttrs(k.attrs),
  }));
  const sheds = sortedBy(map.sheds, (s) =>
    s.below_since === undefined
      ? { share: s.share, at: s.at }
      : { share: s.share, at: s.at, below_since: s.below_since },
  );
  const fences = sortedBy(map.fences, (f) => ({
    countries: [...f.countries],
    continents: [...f.continents],
    regions: [...f.regions],
    floor: f.floor,
  }));
  return JSON.stringify({
    v: 1,
    rev: map.rev,
    epoch: map.epoch,
    compiled_at: map.compiled_at,
    default: route(map.default),
    countries: sortedBy(map.countries, route) ?? {},
    problems: [...map.problems],
    history: map.history,
    ...(kept ? { kept } : {}),
    ...(sheds ? { sheds } : {}),
    ...(fences ? { fences } : {}),
  });
}

const text = fc.string({ unit: "binary", maxLength: 12 });
const pool = fc.constantFrom("fra-1", "ams-1", "p\u00e9-1", 'q"x', "lon-1");
const link = fc.record({ pool, origin: text });
const routeArb: fc.Arbitrary<Route> = fc.record(
  {
    pool,
    origin: text,
    chain: fc.array(link, { maxLength: 4 }),
    source: text,
    degraded: fc.constantFrom(null, "all-pools-unhealthy", "all-pools-slow", "no-default-rule"),
    weights: fc.array(fc.record({ pool, weight: fc.integer({ min: 1, max: 1000 }) }), {
      maxLength: 3,
    }),
    shed: fc.array(fc.record({ pool, share: fc.integer({ min: 1, max: 10 }).map((n) => n * 10) }), {
      maxLength: 2,
    }),
    attrs: fc.dictionary(fc.constantFrom("tier", "cdn-host", "z", "a"), text, { maxKeys: 3 }),
    fence: text,
  },
  { requiredKeys: ["pool", "origin", "chain", "source", "degraded"] },
);
const mapArb: fc.Arbitrary<CompiledMap> = fc.record(
  {
    v: fc.constant(1 as const),
    rev: fc.integer({ min: 0 }),
    epoch: fc.integer({ min: 0 }),
    compiled_at: fc.constantFrom("2026-12-02T10:00:00.000Z", ""),
    default: routeArb,
    countries: fc.dictionary(fc.constantFrom("DE", "FR", "US", "XX", "T1", "AT"), routeArb, {
      maxKeys: 6,
    }),
    problems: fc.array(text, { maxLength: 3 }),
    history: fc.nat(5),
    kept: fc.dictionary(
      fc.constantFrom("DE", "_default", "continent/EU"),
      fc.record(
        {
          primary: pool,
          fallbacks: fc.array(pool, { maxLength: 3 }),
          weights: fc.dictionary(pool, fc.integer({ min: 1, max: 1000 }), { maxKeys: 3 }),
          attrs: fc.dictionary(fc.constantFrom("tier", "a"), text, { maxKeys: 2 }),
        },
        { requiredKeys: ["primary", "fallbacks"] },
      ),
      { maxKeys: 2 },
    ),
    sheds: fc.dictionary(
      pool,
      fc.record(
        { share: fc.constantFrom(10, 50, 100), at: text, below_since: text },
        { requiredKeys: ["share", "at"] },
      ),
      { maxKeys: 2 },
    ),
    fences: fc.dictionary(
      fc.constantFrom("eu", "gdpr"),
      fc.record({
        countries: fc.array(fc.constantFrom("DE", "FR"), { maxLength: 2 }),
        continents: fc.array(fc.constantFrom("EU"), { maxLength: 1 }),
        regions: fc.array(fc.constantFrom("eu-west"), { maxLength: 1 }),
        floor: pool,
      }),
      { maxKeys: 2 },
    ),
  },
  { requiredKeys: ["v", "rev", "epoch", "compiled_at", "default", "countries", "problems"] },
) as fc.Arbitrary<CompiledMap>;

describe("serializeMap", () => {
  it("writes exactly the plain JSON.stringify of the document, for any map", () => {
    fc.assert(
      fc.property(mapArb, (map) => {
        expect(serializeMap(map)).toBe(reference(map));
        // A second time, every route's text comes from the cache: still the same document.
        expect(serializeMap(map)).toBe(reference(map));
      }),
      { numRuns: 400 },
    );
  });

  it("shares each route's text between the map and its routing text", () => {
    fc.assert(
      fc.property(mapArb, (map) => {
        const routing = routingText(map);
        // Routing ignores the revision and the sheds' fall clocks (`below_since`).
        const sheds = map.sheds
          ? Object.fromEntries(
              Object.entries(map.sheds).map(([p, s]) => [p, { share: s.share, at: s.at }]),
            )
          : undefined;
        const plain = { ...map, rev: 0, epoch: 0, compiled_at: "", ...(sheds ? { sheds } : {}) };
        expect(routing).toBe(reference(plain));
        for (const route of Object.values(map.countries))
          expect(routing).toContain(`:${routeText(route)}`);
      }),
      { numRuns: 200 },
    );
  });

  it("gives one route object, named by two countries, the same text in both", () => {
    const route: Route = {
      pool: "fra-1",
      origin: "https://fra-1.example",
      chain: [{ pool: "fra-1", origin: "https://fra-1.example" }],
      source: "country/_default",
      degraded: null,
      attrs: { tier: "gold", "cdn-host": "eu" },
    };
    const map: CompiledMap = {
      v: 1,
      rev: 7,
      epoch: 1,
      compiled_at: "2026-12-02T10:00:00.000Z",
      default: route,
      countries: { DE: route, AT: route },
      problems: [],
      history: 0,
    };
    const doc = JSON.parse(serializeMap(map)) as { countries: Record<string, unknown> };
    expect(Object.keys(doc.countries)).toEqual(["AT", "DE"]);
    expect(doc.countries.AT).toEqual(doc.countries.DE);
    expect(routeText(route)).toBe(
      '{"pool":"fra-1","origin":"https://fra-1.example","chain":[{"pool":"fra-1","origin":"https://fra-1.example"}],"source":"country/_default","degraded":null,"attrs":{"cdn-host":"eu","tier":"gold"}}',
    );
  });
});
