import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  compile,
  compileState,
  decodeSnapshot,
  RoutingIndex,
  type RoutingState,
  type SnapshotEntry,
} from "../../../core/index.js";
import { op } from "../../helpers/routing-ops.js";
import { opts, P } from "../../helpers/snapshot.js";

/** Everything order-sensitive about a state, as plain data. */
function plain(s: RoutingState) {
  return {
    ...s,
    countries: [...s.countries],
    overrides: [...s.overrides],
    pools: [...s.pools].sort(),
    health: [...s.health].sort(),
    invalidCountries: [...s.invalidCountries],
    invalidOverrides: [...s.invalidOverrides],
    continents: [...s.continents],
    invalidContinents: [...s.invalidContinents],
    continentOverrides: [...s.continentOverrides],
    fences: [...s.fences],
    invalidFences: [...s.invalidFences],
    observed: [...s.observed].map(([cc, byPool]) => [cc, [...byPool]]),
    problems: [...s.problems].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)),
  };
}

describe("RoutingIndex", () => {
  it("keeps valid observations by country and pool, and lets them go with their keys", () => {
    const index = new RoutingIndex(P);
    const seen = { p90_ms: 1400, samples: 200, error_ratio: 0.01 };
    index.upsert({ key: `${P}observed/BR/fra-1`, value: JSON.stringify(seen), modRevision: 1 });
    index.upsert({ key: `${P}observed/BR/ams-1`, value: "{broken", modRevision: 2 });
    expect([...index.state().observed]).toEqual([["BR", new Map([["fra-1", seen]])]]);
    expect(index.state().problems.map((p) => p.key)).toContain("observed/BR/ams-1");
    index.delete(`${P}observed/BR/fra-1`);
    expect(index.state().observed.size).toBe(0);
  });

  it("kept up to date change by change, gives the state and map of decoding every key afresh", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 40 }), (ops) => {
        const index = new RoutingIndex(P);
        const model = new Map<string, SnapshotEntry>();
        ops.forEach(({ rel, value }, i) => {
          const key = `${P}${rel}`;
          if (value === null) {
            expect(index.delete(key)).toBe(model.delete(key));
          } else {
            const entry = { key, value: new TextEncoder().encode(value), modRevision: i + 1 };
            model.set(key, entry);
            index.upsert(entry);
          }
          const snapshot = { revision: i + 1, entries: [...model.values()] };
          expect(plain(index.state())).toEqual(plain(decodeSnapshot(snapshot, P)));
          expect(JSON.stringify(compileState(index.state(), i + 1, opts()).map)).toBe(
            JSON.stringify(compile(snapshot, opts()).map),
          );
          expect(index.size).toBe(model.size);
          const newest = Math.max(0, ...[...model.values()].map((e) => e.modRevision ?? 0));
          expect(index.newestModRevision).toBe(newest);
        });
        const again = new RoutingIndex(P);
        again.reset([...model.values()].reverse());
        index.reset(model.values());
        expect(plain(again.state())).toEqual(plain(index.state()));
      }),
      { numRuns: 300 },
    );
  });

  it("compiles the sheds of pools that arrived out of name order as decoding afresh does", () => {
    // fast-check's counterexample (seed 87473832): fra-1 reaches the index before ams-1, and
    // both shed, so the map's `sheds` must not follow the order the pools arrived in.
    const slow = '"slow_ms":{"low":200,"high":1000}';
    const entries: SnapshotEntry[] = [
      ["health/fra-1", '{"status":"healthy","p90_ms":400}'],
      ["pool/fra-1", `{"origin":"https://fra-1.example.com",${slow}}`],
      ["health/ams-1", '{"status":"healthy","p90_ms":900}'],
      ["pool/ams-1", `{"origin":"https://ams-1.example.com",${slow}}`],
    ].map(([rel, value], i) => ({ key: `${P}${rel}`, value: value as string, modRevision: i + 1 }));
    const index = new RoutingIndex(P);
    for (const e of entries) index.upsert(e);
    const incremental = compileState(index.state(), 4, opts()).map;
    const afresh = compile({ revision: 4, entries }, opts()).map;
    expect(Object.keys(incremental.sheds ?? {})).toEqual(["ams-1", "fra-1"]);
    expect(JSON.stringify(incremental)).toBe(JSON.stringify(afresh));
  });

  it("decodes a key again only when its mod_revision moves, and everything after clear", () => {
    const index = new RoutingIndex(P);
    const put = (value: string, modRevision?: number) =>
      index.upsert({ key: `${P}country/DE`, value, ...(modRevision ? { modRevision } : {}) });
    put('{"primary":"fra-1","fallbacks":[]}', 5);
    // The same revision is the same value in one history: not decoded (nor changed) again.
    put('{"primary":"ams-1","fallbacks":[]}', 5);
    expect(index.state().countries.get("DE")?.primary).toBe("fra-1");
    put('{"primary":"ams-1","fallbacks":[]}', 6);
    expect(index.state().countries.get("DE")?.primary).toBe("ams-1");
    index.reset([{ key: `${P}country/DE`, value: "{", modRevision: 6 }]);
    expect(index.state().countries.get("DE")?.primary).toBe("ams-1");
    index.clear();
    index.reset([{ key: `${P}country/DE`, value: "{", modRevision: 6 }]);
    expect(index.state().countries.has("DE")).toBe(false);
    expect(index.state().invalidCountries.has("DE")).toBe(true);
    // Without a revision a value is always decoded.
    put('{"primary":"par-1","fallbacks":[]}');
    expect(index.state().countries.get("DE")?.primary).toBe("par-1");
  });

  it("hands out states that later changes leave alone, and ignores keys outside its prefix", () => {
    const index = new RoutingIndex(P);
    index.upsert({
      key: `${P}pool/fra-1`,
      value: '{"origin":"https://fra.example.com"}',
      modRevision: 1,
    });
    const before = index.state();
    index.delete(`${P}pool/fra-1`);
    index.upsert({
      key: "/other/pool/ams-1",
      value: '{"origin":"https://a.example.com"}',
      modRevision: 2,
    });
    expect(before.pools.has("fra-1")).toBe(true);
    expect(index.state().pools.size).toBe(0);
    expect(index.size).toBe(0);
  });
});
