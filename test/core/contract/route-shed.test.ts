import { describe, expect, it } from "vitest";
import { formatShed, shedRoute } from "../../../core/contract/route-shed.js";
import { type CompiledMap, compile, pickWeighted, type Route } from "../../../core/index.js";
import { opts, snap, world } from "../../helpers/snapshot.js";

const link = (pool: string) => ({ pool, origin: `https://${pool}.example.net` });
const route = (pools: string[], weights?: Record<string, number>): Route => {
  const chain = pools.map(link);
  const base: Route = { ...link(pools[0] ?? ""), chain, source: "country/DE", degraded: null };
  return weights
    ? { ...base, weights: Object.entries(weights).map(([pool, weight]) => ({ pool, weight })) }
    : base;
};
const shares = (o: Record<string, number>) => new Map(Object.entries(o));

describe("shedRoute: a pool's shed compiled into the route's weights", () => {
  it("an unweighted route: the first pool keeps (100 − share) %, the next takes the rest", () => {
    const r = shedRoute(route(["fra-1", "ams-1", "par-1"]), shares({ "fra-1": 40 }));
    expect(r.weights).toEqual([
      { pool: "fra-1", weight: 600 },
      { pool: "ams-1", weight: 400 },
    ]);
    expect(r.shed).toEqual([{ pool: "fra-1", share: 40 }]);
    expect(r.chain.map((c) => c.pool)).toEqual(["fra-1", "ams-1", "par-1"]);
    expect(r.pool).toBe("fra-1");
  });

  it("a weighted route: the shed pool's part moves to the next pool of the chain", () => {
    const r = shedRoute(
      route(["fra-1", "ams-1", "par-1"], { "fra-1": 80, "ams-1": 20 }),
      shares({ "fra-1": 50 }),
    );
    expect(r.weights).toEqual([
      { pool: "fra-1", weight: 400 },
      { pool: "ams-1", weight: 600 },
    ]);
  });

  it("the next pool sheds too: viewers cascade down the chain", () => {
    const r = shedRoute(route(["fra-1", "ams-1", "par-1"]), shares({ "fra-1": 50, "ams-1": 100 }));
    expect(r.weights).toEqual([
      { pool: "fra-1", weight: 500 },
      { pool: "par-1", weight: 500 },
    ]);
    expect(r.shed).toEqual([
      { pool: "fra-1", share: 50 },
      { pool: "ams-1", share: 100 },
    ]);
    expect(formatShed(r.shed ?? [])).toBe("fra-1:50,ams-1:100");
  });

  it("a pool shed by the country's viewers says so in the route and in X-Edge-Shed", () => {
    const r = shedRoute(
      route(["fra-1", "ams-1", "par-1"]),
      shares({ "fra-1": 50, "ams-1": 20 }),
      new Set(["fra-1"]),
    );
    expect(r.shed).toEqual([
      { pool: "fra-1", share: 50, by: "viewers" },
      { pool: "ams-1", share: 20 },
    ]);
    expect(formatShed(r.shed ?? [])).toBe("fra-1:50;by=viewers,ams-1:20");
  });

  it("what the last pool cannot hand on goes back to the least shed pool", () => {
    const r = shedRoute(route(["fra-1", "ams-1"]), shares({ "fra-1": 30, "ams-1": 100 }));
    expect(r.weights).toEqual([{ pool: "fra-1", weight: 1000 }]);
    expect(r.shed).toEqual([{ pool: "ams-1", share: 100 }]);
  });

  it("a shed pool the route does not use changes nothing", () => {
    const r = route(["fra-1", "ams-1"]);
    expect(shedRoute(r, shares({ "ams-1": 50 }))).toBe(r);
    expect(shedRoute(r, shares({ "war-1": 50 }))).toBe(r);
  });

  it("every pool fully shed: the route as it is, degraded all-pools-slow", () => {
    const r = route(["fra-1", "ams-1"], { "fra-1": 80, "ams-1": 20 });
    expect(shedRoute(r, shares({ "fra-1": 100, "ams-1": 100 }))).toEqual({
      ...r,
      degraded: "all-pools-slow",
    });
  });
});

describe("shed viewers are sticky (weighted rendezvous hashing over 1,000 viewer keys)", () => {
  const keys = Array.from({ length: 1000 }, (_, i) => `viewer-${i}`);
  const mapAt = (
    p90: number,
    previous: CompiledMap | null = null,
    now = Date.parse("2026-11-29T15:00:00Z"),
  ) =>
    compile(
      snap(
        world({
          "pool/fra-1": { origin: "https://fra-1.example.net", slow_ms: { low: 800, high: 2000 } },
          "health/fra-1": { status: "healthy", p90_ms: p90 },
        }),
      ),
      opts({ carried: previous, now: new Date(now) }),
    ).map;
  const picks = (map: CompiledMap) =>
    keys.map((k) => {
      const r = map.countries.DE;
      return r?.weights ? pickWeighted(k, r.weights) : r?.pool;
    });

  it("share 50: about half of the viewers move, the same ones every time", () => {
    const before = picks(mapAt(300));
    expect(new Set(before)).toEqual(new Set(["fra-1"]));
    const shed = picks(mapAt(1400));
    const moved = shed.filter((p) => p !== "fra-1");
    expect(new Set(moved)).toEqual(new Set(["ams-1"]));
    expect(moved.length).toBeGreaterThan(450);
    expect(moved.length).toBeLessThan(550);
    expect(picks(mapAt(1400))).toEqual(shed);
  });

  it("50 → 40 moves back only shed viewers; nobody else moves", () => {
    const fifty = mapAt(1400);
    const at50 = picks(fifty);
    const low = mapAt(300, fifty, Date.parse("2026-11-29T15:00:01Z"));
    const forty = mapAt(300, low, Date.parse("2026-11-29T15:01:01Z"));
    expect(forty.countries.DE?.shed).toEqual([{ pool: "fra-1", share: 40 }]);
    const at40 = picks(forty);
    const changed = keys.filter((_, i) => at50[i] !== at40[i]);
    for (const k of changed) {
      const i = keys.indexOf(k);
      expect([at50[i], at40[i]]).toEqual(["ams-1", "fra-1"]);
    }
    expect(changed.length).toBeGreaterThan(60);
    expect(changed.length).toBeLessThan(140);
  });
});
