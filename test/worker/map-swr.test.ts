import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import { type Origins, type ReceivedRequest, startOrigins } from "../../testkit/origins.js";
import { type EdgeResponse, startWorker, type TestWorker } from "../../testkit/worker.js";
import { READ_BUDGET_MS } from "../../worker/map-cache.js";
import { buildMap, type MapSpec } from "../cases/routing-cases.js";

const AMS: MapSpec = { default: { chain: ["ams-1"], source: "country/_default" } };
const FRA: MapSpec = { default: { chain: ["fra-1"], source: "country/_default" } };
/** KV as slow as a bad day: twice the read budget. */
const SLOW_KV_MS = 3_000;
/** Far below a 3 s KV read, far above a loopback request on a busy machine. */
const NO_WAIT_MS = 1_000;

describe("stale-while-revalidate in workerd: KV reads delayed 3 s and hanging", () => {
  let origins: Origins;
  const workers: TestWorker[] = [];
  const doc = (spec: MapSpec, rev: number, history = 0) =>
    serializeMap({ ...buildMap(spec, { rev, originOf: (p) => origins.get(p).url }), history });
  const start = async (isolateSeconds: string) => {
    const w = await startWorker({
      ISOLATE_CACHE_SECONDS: isolateSeconds,
      FLOOR_POOL: "floor-1",
      ORIGIN_TEMPLATE: origins.get("floor-1").url,
    });
    workers.push(w);
    return w;
  };
  /** Requests for `ms`, one after another; every answer is kept. */
  const hammer = async (w: TestWorker, ms: number): Promise<EdgeResponse[]> => {
    const out: EdgeResponse[] = [];
    const until = Date.now() + ms;
    while (Date.now() < until) {
      out.push(await w.dispatch("/seg.ts", { country: "DE" }));
      await sleep(20);
    }
    return out;
  };
  const slowest = (rs: EdgeResponse[]) => Math.max(...rs.map((r) => r.elapsedMs));

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1", "floor-1"]);
  });
  afterEach(async () => {
    await Promise.all(workers.splice(0).map((w) => w.dispose()));
  });
  afterAll(async () => {
    await origins?.close();
  });

  it(`a cold isolate waits READ_BUDGET_MS (${READ_BUDGET_MS} ms) at most, then serves the floor (no-map)`, async () => {
    const w = await start("5");
    await w.putMap(doc(AMS, 10), { settle: false });
    w.kv.delay(SLOW_KV_MS);
    const first = await w.dispatch("/first", { country: "DE" });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-edge-degraded")).toBe("no-map");
    expect(first.json<ReceivedRequest>().origin).toBe("floor-1");
    expect(first.elapsedMs).toBeGreaterThanOrEqual(READ_BUDGET_MS - 20);
    expect(first.elapsedMs).toBeLessThan(SLOW_KV_MS - 200);
    // While that read is still out, nobody waits for it.
    const during = await w.dispatch("/during", { country: "DE" });
    expect(during.headers.get("x-edge-degraded")).toBe("no-map");
    expect(during.elapsedMs).toBeLessThan(NO_WAIT_MS);
    // Its late answer is taken.
    const later = await hammer(w, SLOW_KV_MS);
    expect(slowest(later)).toBeLessThan(NO_WAIT_MS);
    expect(later.at(-1)?.headers.get("x-edge-revision")).toBe("10");
    expect(later.at(-1)?.headers.get("x-edge-degraded")).toBeNull();
    expect(w.kv.started).toBe(1);
  });

  it("a cold isolate whose first read hangs serves the floor after the budget, then never waits", async () => {
    const w = await start("0");
    await w.putMap(doc(AMS, 10), { settle: false });
    w.kv.hang();
    const first = await w.dispatch("/", { country: "DE" });
    expect(first.headers.get("x-edge-degraded")).toBe("no-map");
    expect(first.elapsedMs).toBeGreaterThanOrEqual(READ_BUDGET_MS - 20);
    const after = await hammer(w, 1_500);
    expect(after.every((r) => r.headers.get("x-edge-degraded") === "no-map")).toBe(true);
    expect(slowest(after)).toBeLessThan(NO_WAIT_MS);
    // One read in flight (single-flight), not one per request.
    expect(w.kv.started).toBe(1);
    w.kv.release();
    const healed = await hammer(w, 1_000);
    expect(healed.at(-1)?.headers.get("x-edge-revision")).toBe("10");
  });

  it("a warm isolate serves its map at once while a 3 s refresh runs, then takes the new map", async () => {
    const w = await start("1");
    await w.putMap(doc(AMS, 20), { settle: false });
    expect((await w.dispatch("/")).headers.get("x-edge-revision")).toBe("20");
    w.kv.delay(SLOW_KV_MS);
    await w.putMap(doc(FRA, 21), { settle: false });
    const rs = await hammer(w, 1_000 + SLOW_KV_MS + 1_500);
    expect(slowest(rs)).toBeLessThan(NO_WAIT_MS);
    expect(rs.every((r) => r.status === 200)).toBe(true);
    const revs = rs.map((r) => r.headers.get("x-edge-revision"));
    expect(revs[0]).toBe("20");
    expect(revs.at(-1)).toBe("21");
    expect(rs.at(-1)?.json<ReceivedRequest>().origin).toBe("fra-1");
    // Revisions only move forward.
    expect(revs.indexOf("20")).toBeLessThan(revs.indexOf("21"));
    expect(revs.lastIndexOf("20")).toBeLessThan(revs.indexOf("21"));
    // A read past its budget marked the held map stale until it answered.
    expect(rs.some((r) => r.headers.get("x-edge-degraded") === "stale-map")).toBe(true);
  });

  it("a warm isolate whose KV hangs keeps serving at once, as stale-map after the budget", async () => {
    const w = await start("1");
    await w.putMap(doc(AMS, 30), { settle: false });
    expect((await w.dispatch("/")).headers.get("x-edge-revision")).toBe("30");
    w.kv.hang();
    await w.putMap(doc(FRA, 31), { settle: false });
    const rs = await hammer(w, 4_000);
    expect(slowest(rs)).toBeLessThan(NO_WAIT_MS);
    expect(rs.every((r) => r.headers.get("x-edge-revision") === "30")).toBe(true);
    expect(rs.at(-1)?.headers.get("x-edge-degraded")).toBe("stale-map");
    expect(rs.at(-1)?.json<ReceivedRequest>().origin).toBe("ams-1");
    expect(w.kv.started).toBeLessThanOrEqual(2);
    w.kv.release();
    const healed = await hammer(w, 2_500);
    expect(healed.at(-1)?.headers.get("x-edge-revision")).toBe("31");
    expect(healed.at(-1)?.headers.get("x-edge-degraded")).toBeNull();
  });

  it("a warm isolate takes a new etcd history's lower revisions, never the old history's", async () => {
    const w = await start("0");
    await w.putMap(doc(AMS, 500, 0));
    const served = async () => (await w.dispatch("/", { country: "DE" })).headers;
    expect((await served()).get("x-edge-revision")).toBe("500");
    // etcd restored from a snapshot: revisions start again, the pushers raise the history.
    await w.putMap(doc(FRA, 3, 1));
    let h = await served();
    expect([h.get("x-edge-revision"), h.get("x-edge-pool"), h.get("x-edge-degraded")]).toEqual([
      "3",
      "fra-1",
      null,
    ]);
    // A KV location still serving the old history's map, even a newer revision of it.
    await w.putMap(doc(AMS, 501, 0));
    h = await served();
    expect([h.get("x-edge-revision"), h.get("x-edge-degraded")]).toEqual(["3", "stale-map"]);
    // An older revision of the new history: also refused.
    await w.putMap(doc(AMS, 2, 1));
    expect((await served()).get("x-edge-revision")).toBe("3");
    await w.putMap(doc(AMS, 4, 1));
    h = await served();
    expect([h.get("x-edge-revision"), h.get("x-edge-pool"), h.get("x-edge-degraded")]).toEqual([
      "4",
      "ams-1",
      null,
    ]);
  });
});
