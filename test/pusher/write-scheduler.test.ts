import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { afterEach, describe, expect, it } from "vitest";
import {
  type CompiledMap,
  type CompileResult,
  compile,
  type MapMeta,
  parseMap,
  serializeMap,
} from "../../core/index.js";
import { systemClock } from "../../pusher/clock.js";
import { createMetrics } from "../../pusher/metrics.js";
import { PusherStatus } from "../../pusher/status.js";
import { WriteScheduler } from "../../pusher/write-scheduler.js";
import { MemoryKv } from "../helpers/memory-kv.js";
import { waitFor } from "./harness.js";

const P = "/edge/routing/v1/";

function result(rev: number, primary = "fra-1"): CompileResult {
  const json = (v: unknown) => JSON.stringify(v);
  return compile(
    {
      revision: rev,
      entries: [
        { key: `${P}pool/fra-1`, value: json({ origin: "https://fra-1.example.net" }) },
        { key: `${P}pool/ams-1`, value: json({ origin: "https://ams-1.example.net" }) },
        { key: `${P}health/fra-1`, value: json({ status: "healthy" }) },
        { key: `${P}health/ams-1`, value: json({ status: "healthy" }) },
        { key: `${P}country/_default`, value: json({ primary, fallbacks: [] }) },
      ],
    },
    {
      carried: null,
      prefix: P,
      floorPool: "par-1",
      originTemplate: "https://{pool}.o.example",
      now: new Date(),
    },
  );
}

const schedulers: WriteScheduler[] = [];
afterEach(async () => {
  await Promise.all(schedulers.splice(0).map((s) => s.stop()));
});

function scheduler(
  kv: MemoryKv,
  o: {
    minIntervalMs?: number;
    canWrite?: () => boolean;
    writeDeadline?: () => number;
    onLoaded?: (map: CompiledMap | null) => boolean;
  } = {},
) {
  const status = new PusherStatus("unit", systemClock);
  const s = new WriteScheduler({
    kv,
    clock: systemClock,
    logger: pino({ level: "silent" }),
    metrics: createMetrics(status),
    status,
    pusherId: "unit",
    canWrite: o.canWrite ?? (() => true),
    writeDeadline: o.writeDeadline ?? (() => Date.now() + 60_000),
    minIntervalMs: o.minIntervalMs ?? 300,
    heartbeatMs: 60_000,
    backoff: { baseMs: 50, maxMs: 200 },
    onLoaded: o.onLoaded ?? (() => false),
  });
  schedulers.push(s);
  s.start();
  return { s, status };
}

const routesRevs = (kv: MemoryKv) => kv.writesOf("routes").map((w) => parseMap(w.value)?.rev ?? -1);

describe("WriteScheduler", () => {
  it("does not rewrite routes KV already holds, but writes meta", async () => {
    const kv = new MemoryKv();
    const r = result(7);
    kv.data.set("routes", serializeMap({ ...r.map, compiled_at: "2020-01-01T00:00:00.000Z" }));
    const { s } = scheduler(kv);
    s.activate();
    s.submit(r);
    await waitFor("meta", () => kv.json<MapMeta>("meta"));
    expect(kv.writesOf("routes")).toEqual([]);
    expect(kv.json<MapMeta>("meta")).toMatchObject({ rev: 7, pusher: "unit" });
  });

  it("never writes a revision older than the one in KV", async () => {
    const kv = new MemoryKv();
    kv.data.set("routes", serializeMap(result(10).map));
    const { s } = scheduler(kv);
    s.activate();
    s.submit(result(5, "ams-1"));
    await waitFor("meta", () => kv.json<MapMeta>("meta"));
    expect(kv.writesOf("routes")).toEqual([]);
    s.submit(result(11, "ams-1"));
    await waitFor("newer routes", () => routesRevs(kv).includes(11));
  });

  it("writes the first change at once and coalesces the next ones at the interval's end", async () => {
    const kv = new MemoryKv();
    const { s } = scheduler(kv, { minIntervalMs: 400 });
    s.activate();
    s.submit(result(1));
    await waitFor("first", () => routesRevs(kv).length === 1);
    s.submit(result(2, "ams-1"));
    s.submit(result(3, "fra-1"));
    s.submit(result(4, "ams-1"));
    await waitFor("second", () => routesRevs(kv).length === 2);
    await sleep(500);
    expect(routesRevs(kv)).toEqual([1, 4]);
    const [a, b] = kv.writesOf("routes");
    expect((b?.at ?? 0) - (a?.at ?? 0)).toBeGreaterThanOrEqual(395);
  });

  it("lets a newer map supersede one waiting for a retry", async () => {
    const kv = new MemoryKv();
    kv.failWrites(2);
    const { s } = scheduler(kv, { minIntervalMs: 10 });
    s.activate();
    s.submit(result(1));
    await waitFor("a failure", () => kv.failures.length >= 1);
    s.submit(result(2, "ams-1"));
    await waitFor("written", () => routesRevs(kv).length > 0);
    await sleep(200);
    expect(routesRevs(kv)).toEqual([2]);
  });

  it("aborts a write still in flight when the leadership write window closes", async () => {
    const kv = new MemoryKv();
    kv.latencyMs = 300;
    let deadline = Date.now() + 100;
    const { s } = scheduler(kv, { minIntervalMs: 10, writeDeadline: () => deadline });
    s.activate();
    s.submit(result(1));
    await waitFor("an aborted write", () => kv.failures.length >= 1);
    expect(kv.writesOf("routes")).toEqual([]);
    deadline = Date.now() + 60_000;
    await waitFor("written once the window is open", () => routesRevs(kv).length === 1);
  });

  it("writes no compile that landed during activation's KV read when a seeded compile follows", async () => {
    const kv = new MemoryKv();
    kv.data.set("routes", serializeMap(result(5).map));
    kv.latencyMs = 300;
    const loaded: (CompiledMap | null)[] = [];
    const { s } = scheduler(kv, {
      minIntervalMs: 10,
      onLoaded: (map) => {
        loaded.push(map);
        return true;
      },
    });
    s.activate();
    await sleep(50);
    s.submit(result(6, "ams-1")); // compiled without the seed the read brings
    await waitFor("the read", () => loaded.length === 1);
    expect(loaded[0]?.rev).toBe(5);
    await sleep(400);
    expect(kv.writes).toEqual([]);
    s.submit(result(7, "ams-1")); // the seeded compile
    await waitFor("written", () => routesRevs(kv).length > 0);
    expect(routesRevs(kv)).toEqual([7]);
  });

  it("writes nothing while it may not write, and catches up when it may", async () => {
    const kv = new MemoryKv();
    let allowed = false;
    const { s } = scheduler(kv, { canWrite: () => allowed });
    s.activate();
    s.submit(result(3));
    await sleep(300);
    expect(kv.writes).toEqual([]);
    allowed = true;
    await waitFor("written", () => routesRevs(kv).includes(3));
    expect(await s.flush(1_000)).toBe(true);
  });
});
