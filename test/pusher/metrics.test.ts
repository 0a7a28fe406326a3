import { describe, expect, it } from "vitest";
import { type CompileResult, compile } from "../../core/index.js";
import pkg from "../../package.json" with { type: "json" };
import { createMetrics } from "../../pusher/metrics.js";
import { PusherStatus } from "../../pusher/status.js";
import { parsePromText, sampleValue } from "../../testkit/prom-text.js";
import { opts, snap, world } from "../helpers/snapshot.js";
import { kvConverged, seedRouting, uniqueNames, useEtcd, waitFor } from "./harness.js";

const suite = useEtcd();

describe("pusher metrics for the alerts", () => {
  it("reports build info, last push, heartbeat seconds, problems by code, floor routes and pools without heartbeat", async () => {
    const { client } = suite;
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const p = suite.start({ prefix, electionKey, heartbeatSeconds: 7 });
    await kvConverged(client, p.kv, prefix);
    const scrape = async () => parsePromText(await p.pusher.metrics.registry.metrics());

    const before = Date.now() / 1000;
    const healthy = await waitFor("a leader's push", async () => {
      const s = await scrape();
      return sampleValue(s, "edge_pusher_is_leader") === 1 ? s : null;
    });
    expect(sampleValue(healthy, "edge_pusher_build_info", { version: pkg.version })).toBe(1);
    expect(sampleValue(healthy, "edge_pusher_heartbeat_seconds")).toBe(7);
    const pushedAt = sampleValue(healthy, "edge_pusher_last_push_timestamp_seconds") ?? 0;
    expect(pushedAt).toBeGreaterThan(before - 30);
    expect(pushedAt).toBeLessThanOrEqual(Date.now() / 1000);
    expect(sampleValue(healthy, "edge_pusher_floor_routes")).toBe(0);
    for (const pool of ["fra-1", "ams-1", "par-1"])
      expect(sampleValue(healthy, "edge_pusher_pool_heartbeat", { pool })).toBe(1);
    expect(healthy.filter((s) => s.name === "edge_pusher_problems_by_code")).toEqual([]);
    // collectDefaultMetrics, on the pusher's own registry
    expect(sampleValue(healthy, "process_resident_memory_bytes")).toBeGreaterThan(0);
    expect(sampleValue(healthy, "nodejs_eventloop_lag_seconds")).toBeGreaterThanOrEqual(0);
    expect(sampleValue(healthy, "edge_pusher_heap_live_bytes")).toBeGreaterThanOrEqual(0);

    // Every pool loses its heartbeat, and two rules break: DE and _default fall to the floor.
    await client.delete().prefix(`${prefix}health/`);
    await client.put(`${prefix}country/FR`).value("{not json");
    await client.put(`${prefix}country/NL`).value(JSON.stringify({ primary: "nowhere-1" }));
    const broken = await waitFor("the broken state's metrics", async () => {
      const s = await scrape();
      // the total is the pushed map's (the leader pushes at most once a second)
      return sampleValue(s, "edge_pusher_floor_routes") === 2 &&
        sampleValue(s, "edge_pusher_problems_by_code", { code: "dangling-reference" }) === 1 &&
        sampleValue(s, "edge_pusher_problems") === 2
        ? s
        : null;
    });
    expect(sampleValue(broken, "edge_pusher_problems_by_code", { code: "invalid-json" })).toBe(1);
    for (const pool of ["fra-1", "ams-1", "par-1"])
      expect(sampleValue(broken, "edge_pusher_pool_heartbeat", { pool })).toBe(0);
    expect(
      sampleValue(broken, "edge_pusher_pool_heartbeat", { pool: "nowhere-1" }),
    ).toBeUndefined();
    expect(sampleValue(broken, "edge_pusher_last_push_timestamp_seconds")).toBeGreaterThan(
      pushedAt,
    );

    // Repaired: the series of fixed problems go, the pools come back.
    await client.delete().key(`${prefix}country/FR`);
    await client.delete().key(`${prefix}country/NL`);
    // fra-1 back: DE routes to it again, _default (ams-1, par-1) stays on the floor
    await client.put(`${prefix}health/fra-1`).value(JSON.stringify({ status: "healthy" }));
    const repaired = await waitFor("the repaired state's metrics", async () => {
      const s = await scrape();
      return sampleValue(s, "edge_pusher_floor_routes") === 1 &&
        s.every((x) => x.name !== "edge_pusher_problems_by_code")
        ? s
        : null;
    });
    expect(sampleValue(repaired, "edge_pusher_pool_heartbeat", { pool: "fra-1" })).toBe(1);
    expect(sampleValue(repaired, "edge_pusher_pool_heartbeat", { pool: "ams-1" })).toBe(0);
  });

  it("per pool: p90, shed ratio, slow_ms.high, health and live checkers; a deleted pool's series go with it", async () => {
    const { client } = suite;
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const put = (k: string, v: unknown) => client.put(`${prefix}${k}`).value(JSON.stringify(v));
    await put("pool/fra-1", {
      origin: "https://fra-1.example.net",
      slow_ms: { low: 800, high: 2000 },
    });
    await client.delete().key(`${prefix}health/fra-1`);
    for (const c of ["a", "b", "c"])
      await put(`health/fra-1/${c}`, { status: "healthy", p90_ms: 1400, samples: 20 });
    await put("pool/war-1", { origin: "https://war-1.example.net" });
    await put("health/war-1", { status: "healthy", p90_ms: 90 });
    await put("pool/lis-1", { origin: "https://lis-1.example.net" });
    await put("health/lis-1", { status: "unhealthy" });
    const p = suite.start({ prefix, electionKey });
    const scrape = async () => parsePromText(await p.pusher.metrics.registry.metrics());
    const slow = await waitFor("fra-1 shedding in the metrics", async () => {
      const s = await scrape();
      return sampleValue(s, "edge_pusher_pool_shed_ratio", { pool: "fra-1" }) === 0.5 ? s : null;
    });
    expect(sampleValue(slow, "edge_pusher_pool_p90_ms", { pool: "fra-1" })).toBe(1400);
    expect(sampleValue(slow, "edge_pusher_pool_live_checkers", { pool: "fra-1" })).toBe(3);
    expect(sampleValue(slow, "edge_pusher_pool_shed_ratio", { pool: "ams-1" })).toBe(0);
    expect(sampleValue(slow, "edge_pusher_pool_p90_ms", { pool: "ams-1" })).toBeUndefined();
    expect(sampleValue(slow, "edge_pusher_pool_live_checkers", { pool: "ams-1" })).toBe(1);
    expect(sampleValue(slow, "edge_pusher_pool_p90_ms", { pool: "war-1" })).toBe(90);
    expect(sampleValue(slow, "edge_pusher_pool_slow_high_ms", { pool: "fra-1" })).toBe(2000);
    expect(sampleValue(slow, "edge_pusher_pool_slow_high_ms", { pool: "war-1" })).toBeUndefined();
    expect(sampleValue(slow, "edge_pusher_pool_healthy", { pool: "fra-1" })).toBe(1);
    expect(sampleValue(slow, "edge_pusher_pool_healthy", { pool: "war-1" })).toBe(1);
    expect(sampleValue(slow, "edge_pusher_pool_healthy", { pool: "lis-1" })).toBe(0);

    await client.delete().key(`${prefix}pool/war-1`);
    await client.delete().key(`${prefix}health/war-1`);
    const gone = await waitFor("war-1's series gone", async () => {
      const s = await scrape();
      return s.some((x) => x.labels.pool === "war-1") ? null : s;
    });
    expect(sampleValue(gone, "edge_pusher_pool_shed_ratio", { pool: "fra-1" })).toBe(0.5);
  });
});

const clock = { now: () => Date.parse("2026-11-29T15:00:00Z") };

/** A compile whose state counts the walks over its pools (each pool report list walks them once). */
function countedCompile(): { result: CompileResult; walks: () => number } {
  const result = compile(snap(world()), opts());
  let walks = 0;
  const pools = result.state.pools;
  const counted = new Proxy(pools, {
    get(target, prop) {
      if (prop === "keys")
        return () => {
          walks += 1;
          return target.keys();
        };
      const v = Reflect.get(target, prop, target);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { result: { ...result, state: { ...result.state, pools: counted } }, walks: () => walks };
}

describe("pusher metrics: pool reports", () => {
  it("a compile builds no pool reports; the scrape does, once per compile", async () => {
    const status = new PusherStatus("p1", clock);
    const metrics = createMetrics(status);
    const { result, walks } = countedCompile();
    metrics.compiled(result);
    expect(walks()).toBe(0);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/edge_pusher_pool_live_checkers\{pool="fra-1"\} \d/);
    const afterScrape = walks();
    // The heartbeat gauge walks the pools too; the three per-pool gauges share one report list.
    expect(afterScrape).toBe(2);
    await metrics.registry.metrics();
    expect(walks()).toBe(afterScrape + 1);
  });
});
