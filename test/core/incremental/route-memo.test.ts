import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CompiledMap,
  type CountryInputs,
  compileState,
  type KeptRule,
  type Route,
  type RouteInputs,
  RouteMemo,
  RoutingIndex,
} from "../../../core/index.js";
import { op } from "../../helpers/routing-ops.js";
import { opts, P, world } from "../../helpers/snapshot.js";

const route = (pool: string): Route => ({
  pool,
  origin: `https://${pool}.example.com`,
  chain: [{ pool, origin: `https://${pool}.example.com` }],
  source: "country/DE",
  degraded: null,
});

/** A memo and the inputs of an index holding one pool and its report. */
function setup() {
  const index = new RoutingIndex(P);
  const put = (rel: string, value: unknown, modRevision: number) =>
    index.upsert({ key: `${P}${rel}`, value: JSON.stringify(value), modRevision });
  put("pool/fra-1", { origin: "https://fra-1.example.com" }, 1);
  put("health/fra-1", { status: "healthy" }, 2);
  const inputs = (shares: ReadonlyMap<string, number> = new Map()): RouteInputs => {
    const s = index.state();
    return { ...opts(), pools: s.pools, health: s.health, shares };
  };
  return { memo: new RouteMemo(), put, inputs };
}

describe("RouteMemo", () => {
  it("makes a rule's route once while pools, reports, shares and settings stay the same", () => {
    const { memo, put, inputs } = setup();
    const rule: KeptRule = { primary: "fra-1", fallbacks: [] };
    let made = 0;
    const make = () => {
      made += 1;
      return route("fra-1");
    };
    memo.begin(inputs());
    const first = memo.route(rule, "country/DE", make);
    expect(memo.route(rule, "country/DE", make)).toBe(first);
    memo.route(rule, "continent/EU", make);
    expect(made).toBe(2);
    // A change elsewhere (a country key) leaves pools and reports as they were.
    put("country/DE", rule, 3);
    memo.begin(inputs());
    expect(memo.route(rule, "country/DE", make)).toBe(first);
    expect(memo.route({ ...rule }, "country/DE", make)).not.toBe(first);
    expect(made).toBe(3);

    /** Begins a compile after `change`, asks for the route again; the routes made so far. */
    const again = (change: () => void, shares: ReadonlyMap<string, number> = new Map()) => {
      change();
      memo.begin(inputs(shares));
      memo.route(rule, "country/DE", make);
      return made;
    };
    const nothing = () => {};
    expect(again(() => put("health/fra-1", { status: "unhealthy" }, 4))).toBe(4);
    expect(again(() => put("health/fra-1/probe-b", { status: "healthy" }, 5))).toBe(5);
    expect(again(() => put("pool/ams-1", { origin: "https://a.example.com" }, 6))).toBe(6);
    expect(again(nothing, new Map([["fra-1", 50]]))).toBe(7);
    expect(again(nothing, new Map([["fra-1", 50]]))).toBe(7);
    expect(again(nothing, new Map([["fra-1", 60]]))).toBe(8);
    memo.begin({ ...inputs(new Map([["fra-1", 60]])), floorPool: "ams-1" });
    memo.route(rule, "country/DE", make);
    memo.begin({ ...inputs(new Map([["fra-1", 60]])), originTemplate: "x/{pool}" });
    memo.route(rule, "country/DE", make);
    expect(made).toBe(10);
  });

  it("hands out the carried object in place of the route it replaced", () => {
    const { memo, inputs } = setup();
    const rule: KeptRule = { primary: "fra-1", fallbacks: [] };
    memo.begin(inputs());
    const made = memo.route(rule, "country/DE", () => route("fra-1"));
    const older = route("fra-1");
    memo.carried(made, older);
    memo.carried(route("fra-1"), route("ams-1")); // not one of the memo's: ignored
    memo.begin(inputs());
    expect(memo.route(rule, "country/DE", () => route("ams-1"))).toBe(older);
  });

  it("gives a country's outcome back only for the same inputs and the route it kept", () => {
    const { memo, inputs } = setup();
    const rule: KeptRule = { primary: "fra-1", fallbacks: [] };
    const base: CountryInputs = {
      own: rule,
      ownInvalid: false,
      override: undefined,
      overrideInvalid: false,
      continent: undefined,
      continentValid: false,
      continentOverride: undefined,
      continentOverrideKey: undefined,
    };
    const kept = route("fra-1");
    const outcome = { route: kept, kept: undefined, problems: [] };
    memo.begin(inputs());
    memo.keepCountry("DE", base, outcome);
    expect(memo.country("DE", { ...base }, kept)).toBe(outcome);
    expect(memo.country("FR", base, kept)).toBeNull();
    // A previous map from elsewhere (KV): its route is another object, even with the same data.
    expect(memo.country("DE", base, route("fra-1"))).toBeNull();
    expect(memo.country("DE", base, undefined)).toBeNull();
    const other: KeptRule = { primary: "fra-1", fallbacks: [] };
    const changed: Array<Partial<CountryInputs>> = [
      { own: other },
      { ownInvalid: true },
      { override: other },
      { overrideInvalid: true },
      { continent: other },
      { continentValid: true },
      { continentOverride: other },
      { continentOverrideKey: "override/EU" },
    ];
    for (const change of changed)
      expect(memo.country("DE", { ...base, ...change }, kept), JSON.stringify(change)).toBeNull();
    // New pools, reports, shares or settings: every country resolves again.
    memo.begin(inputs(new Map([["fra-1", 50]])));
    expect(memo.country("DE", base, kept)).toBeNull();
  });

  it("resolves again only the country a change decides, and hands the others on as they were", () => {
    const index = new RoutingIndex(P);
    const seed = world({
      "continent/EU": { primary: "ams-1", fallbacks: ["par-1"] },
      "pool/lon-1": { origin: "https://lon-1.example.net" },
      "health/lon-1": { status: "unhealthy" },
      "country/FR": { primary: "lon-1", fallbacks: ["par-1"] },
      "override/FR": { primary: "gone-1", fallbacks: [] },
    });
    Object.entries(seed).forEach(([rel, v], i) => {
      const value = typeof v === "string" ? v : JSON.stringify(v);
      index.upsert({ key: `${P}${rel}`, value, modRevision: i + 1 });
    });
    const memo = new RouteMemo();
    const first = compileState(index.state(), 20, opts({ routeMemo: memo })).map;
    index.upsert({
      key: `${P}country/DE`,
      value: JSON.stringify({ primary: "ams-1", fallbacks: [] }),
      modRevision: 21,
    });
    const { map: second, problems } = compileState(
      index.state(),
      21,
      opts({ carried: first, routeMemo: memo }),
    );
    expect(second.countries.DE?.pool).toBe("ams-1");
    expect(second.countries.DE).not.toBe(first.countries.DE);
    expect(second.countries.AT).toBe(first.countries.AT);
    // FR's route leaves out its unhealthy primary, and its override names an undefined pool: its
    // route, its kept rule and its problem come back from the memo too.
    expect(second.countries.FR).toBe(first.countries.FR);
    expect(second.countries.FR?.pool).toBe("par-1");
    expect(second.kept?.FR).toBe(first.kept?.FR);
    expect(second.kept?.FR).toEqual({ primary: "lon-1", fallbacks: ["par-1"] });
    expect(problems.filter((p) => p.key === "override/FR").map((p) => p.code)).toEqual([
      "dangling-reference",
    ]);
    // The same compile from a previous map read back from KV resolves every country afresh.
    const parsed = JSON.parse(JSON.stringify(first)) as CompiledMap;
    const fresh = compileState(index.state(), 21, opts({ carried: parsed })).map;
    const again = compileState(index.state(), 21, opts({ carried: parsed, routeMemo: memo })).map;
    expect(again.countries.AT).toBe(parsed.countries.AT);
    expect(JSON.stringify(again)).toBe(JSON.stringify(fresh));
    expect(JSON.stringify(second)).toBe(JSON.stringify(fresh));
  });

  it("leaves every compile of a changing prefix as it is without one", () => {
    fc.assert(
      fc.property(fc.array(op, { minLength: 1, maxLength: 40 }), (ops) => {
        const index = new RoutingIndex(P);
        // A world whose rules are usable, so that most compiles route through the memo.
        const seed = Object.entries(
          world({
            "pool/fra-1": {
              origin: "https://fra-1.example.net",
              slow_ms: { low: 200, high: 1000 },
              viewers: true,
            },
          }),
        );
        seed.forEach(([rel, v], i) => {
          const value = typeof v === "string" ? v : JSON.stringify(v);
          index.upsert({ key: `${P}${rel}`, value, modRevision: i + 1 });
        });
        const base = seed.length;
        const memo = new RouteMemo();
        let withMemo: CompiledMap | null = null;
        let without: CompiledMap | null = null;
        ops.forEach(({ rel, value }, i) => {
          const key = `${P}${rel}`;
          if (value === null) index.delete(key);
          else
            index.upsert({
              key,
              value: new TextEncoder().encode(value),
              modRevision: base + i + 1,
            });
          // Half the steps compile twice: unchanged input, every route from the memo.
          for (let k = 0; k < 1 + (i % 2); k++) {
            const now = new Date(Date.parse("2026-11-29T15:00:00.000Z") + (i * 2 + k) * 20_000);
            withMemo = compileState(
              index.state(),
              base + i + 1,
              opts({ now, carried: withMemo, routeMemo: memo }),
            ).map;
            without = compileState(
              index.state(),
              base + i + 1,
              opts({ now, carried: without }),
            ).map;
            expect(JSON.stringify(withMemo)).toBe(JSON.stringify(without));
          }
        });
      }),
      { numRuns: 300 },
    );
  });
});
