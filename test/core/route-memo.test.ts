import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type CompiledMap,
  compileState,
  type KeptRule,
  type Route,
  type RouteInputs,
  RouteMemo,
  RoutingIndex,
} from "../../core/index.js";
import { op } from "../helpers/routing-ops.js";
import { opts, P, world } from "../helpers/snapshot.js";

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
              opts({ now, previous: withMemo, routeMemo: memo }),
            ).map;
            without = compileState(
              index.state(),
              base + i + 1,
              opts({ now, previous: without }),
            ).map;
            expect(JSON.stringify(withMemo)).toBe(JSON.stringify(without));
          }
        });
      }),
      { numRuns: 300 },
    );
  });
});
