import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import { type Origins, type ReceivedRequest, startOrigins } from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap, type MapSpec } from "../cases/routing-cases.js";

const TOKEN = "map-state-token";
const AMS: MapSpec = { default: { chain: ["ams-1"], source: "country/_default" } };
const FRA: MapSpec = { default: { chain: ["fra-1"], source: "country/_default" } };

describe("map states: no map, last known good, older revisions", () => {
  let origins: Origins;
  let worker: TestWorker;
  const doc = (spec: MapSpec, rev: number) =>
    serializeMap(buildMap(spec, { rev, originOf: (p) => origins.get(p).url }));

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1", "floor-7"]);
    worker = await startWorker({
      DEBUG_TOKEN: TOKEN,
      FLOOR_POOL: "floor-7",
      // No {pool} here: every templated pool lands on the one loopback floor origin.
      ORIGIN_TEMPLATE: origins.get("floor-7").url,
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });

  it("a cold isolate with no map routes to the floor with no-map", async () => {
    const res = await worker.dispatch("/cold?q=1", { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.json<ReceivedRequest>().origin).toBe("floor-7");
    expect(res.json<ReceivedRequest>().url).toBe("/cold?q=1");
    expect(res.headers.get("x-edge-pool")).toBe("floor-7");
    expect(res.headers.get("x-edge-source")).toBe("floor");
    expect(res.headers.get("x-edge-degraded")).toBe("no-map");
    expect(res.headers.get("x-edge-revision")).toBe("0");
    expect(res.headers.get("x-edge-country")).toBe("DE");

    expect((await worker.dispatch("/__edge/health")).json()).toEqual({ ok: true, rev: null });
    const route = await worker.dispatch("/__edge/route", {
      country: "DE",
      headers: { "X-Edge-Debug-Token": TOKEN },
    });
    expect(route.json()).toMatchObject({
      rev: null,
      map: "none",
      degraded: "no-map",
      route: { pool: "floor-7", origin: origins.get("floor-7").url, source: "floor" },
    });
  });

  it("a malformed document on a cold isolate still routes to the floor", async () => {
    await worker.putMap('{"v":1,"rev":');
    const res = await worker.dispatch("/", { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edge-degraded")).toBe("no-map");
  });

  it("serves a good map, then keeps it as stale-map when the next is malformed", async () => {
    await worker.putMap(doc(AMS, 10));
    const good = await worker.dispatch("/", { country: "DE" });
    expect(good.headers.get("x-edge-pool")).toBe("ams-1");
    expect(good.headers.get("x-edge-revision")).toBe("10");
    expect(good.headers.get("x-edge-degraded")).toBeNull();

    await worker.putMap(doc(FRA, 11).slice(0, 40));
    const stale = await worker.dispatch("/", { country: "DE" });
    expect(stale.status).toBe(200);
    expect(stale.headers.get("x-edge-pool")).toBe("ams-1");
    expect(stale.headers.get("x-edge-revision")).toBe("10");
    expect(stale.headers.get("x-edge-degraded")).toBe("stale-map");
    expect(stale.json<ReceivedRequest>().origin).toBe("ams-1");
    const route = await worker.dispatch("/__edge/route", {
      headers: { "X-Edge-Debug-Token": TOKEN },
    });
    expect(route.json()).toMatchObject({ rev: 10, map: "stale", degraded: "stale-map" });
  });

  it("recovers with the next good map", async () => {
    await worker.putMap(doc(FRA, 12));
    const res = await worker.dispatch("/", { country: "DE" });
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
    expect(res.headers.get("x-edge-revision")).toBe("12");
    expect(res.headers.get("x-edge-degraded")).toBeNull();
  });

  it("ignores a map with a lower rev than one it already served", async () => {
    await worker.putMap(doc(AMS, 11));
    const res = await worker.dispatch("/", { country: "DE" });
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
    expect(res.headers.get("x-edge-revision")).toBe("12");
    expect(res.headers.get("x-edge-degraded")).toBe("stale-map");
    expect((await worker.dispatch("/__edge/health")).json()).toEqual({ ok: true, rev: 12 });
  });

  it("takes a new etcd history's map whatever its rev, and drops back to no older history", async () => {
    const withHistory = (spec: MapSpec, rev: number, history: number) =>
      JSON.stringify({ ...JSON.parse(doc(spec, rev)), history });
    await worker.putMap(withHistory(AMS, 2, 1));
    const res = await worker.dispatch("/", { country: "DE" });
    expect(res.headers.get("x-edge-pool")).toBe("ams-1");
    expect(res.headers.get("x-edge-revision")).toBe("2");
    expect(res.headers.get("x-edge-degraded")).toBeNull();
    // The held map before it had no history field (history 0): its rev 12 is now behind.
    await worker.putMap(doc(FRA, 12));
    const old = await worker.dispatch("/", { country: "DE" });
    expect(old.headers.get("x-edge-revision")).toBe("2");
    expect(old.headers.get("x-edge-degraded")).toBe("stale-map");
    await worker.putMap(withHistory(FRA, 13, 1));
    expect((await worker.dispatch("/", { country: "DE" })).headers.get("x-edge-pool")).toBe(
      "fra-1",
    );
  });

  it("keeps the last good map when the key disappears", async () => {
    await worker.deleteMap();
    const res = await worker.dispatch("/", { country: "DE" });
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
    expect(res.headers.get("x-edge-degraded")).toBe("stale-map");
  });
});

describe("isolate cache (ISOLATE_CACHE_SECONDS=3)", () => {
  let origins: Origins;
  let worker: TestWorker;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1"]);
    worker = await startWorker({ ISOLATE_CACHE_SECONDS: "3" });
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });

  it("does not re-read KV while the map is fresh, then picks up the new one", async () => {
    const originOf = (p: string) => origins.get(p).url;
    await worker.putMap(serializeMap(buildMap(AMS, { rev: 1, originOf })));
    const first = await worker.dispatch("/");
    expect(first.headers.get("x-edge-revision")).toBe("1");

    await worker.putMap(serializeMap(buildMap(FRA, { rev: 2, originOf })));
    const cached = await worker.dispatch("/");
    expect(cached.headers.get("x-edge-revision")).toBe("1");
    expect(cached.headers.get("x-edge-pool")).toBe("ams-1");
    expect(cached.headers.get("x-edge-degraded")).toBeNull();

    let rev: string | null = null;
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      await sleep(250);
      const res = await worker.dispatch("/");
      rev = res.headers.get("x-edge-revision");
      if (rev === "2") {
        expect(res.headers.get("x-edge-pool")).toBe("fra-1");
        break;
      }
    }
    expect(rev).toBe("2");
  });
});

describe("a Worker deployed without its ROUTING binding", () => {
  let origins: Origins;
  let worker: TestWorker;

  beforeAll(async () => {
    origins = await startOrigins(["floor-2"]);
    worker = await startWorker(
      { FLOOR_POOL: "floor-2", ORIGIN_TEMPLATE: origins.get("floor-2").url },
      { routingBinding: false },
    );
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });

  it("still serves: the floor with no-map, never a 500", async () => {
    const res = await worker.dispatch("/p", { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edge-pool")).toBe("floor-2");
    expect(res.headers.get("x-edge-degraded")).toBe("no-map");
    expect(res.json<ReceivedRequest>().origin).toBe("floor-2");
    expect((await worker.dispatch("/__edge/health")).json()).toEqual({ ok: true, rev: null });
  });
});
