import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { compile, serializeMap } from "../../core/index.js";
import { type Origins, type ReceivedRequest, startOrigins } from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { opts, snap } from "../helpers/snapshot.js";

const EU_POOLS = ["fra-1", "ams-1", "par-1"];
const ALL_POOLS = [...EU_POOLS, "use-1"];

describe("fenced routes in workerd (docs/reference.md §10)", () => {
  let origins: Origins;
  let worker: TestWorker;
  let rev = 10;

  /** Compiles a world whose fence `eu` covers Europe and writes the map. */
  const putMap = async (extra: Record<string, unknown> = {}) => {
    const kv: Record<string, unknown> = {
      "fence/eu": { continents: ["EU"], regions: ["eu-central", "eu-west"], floor: "par-1" },
      "country/_default": { primary: "use-1", fallbacks: ["par-1"] },
      "country/DE": { primary: "fra-1", fallbacks: ["ams-1"] },
      epoch: "1",
      ...extra,
    };
    for (const p of ALL_POOLS) {
      const region = p === "use-1" ? "us-east" : p === "fra-1" ? "eu-central" : "eu-west";
      kv[`pool/${p}`] ??= { origin: origins.get(p).url, region };
      kv[`health/${p}`] ??= { status: "healthy" };
    }
    rev += 1;
    await worker.putMap(serializeMap(compile(snap(kv, rev), opts({ floorPool: "use-1" })).map));
  };

  beforeAll(async () => {
    origins = await startOrigins(ALL_POOLS);
    // FLOOR_POOL outside the fence: a fenced route must never reach it (it has a map).
    worker = await startWorker({ MAX_ATTEMPTS: "4", FLOOR_POOL: "use-1" });
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });
  beforeEach(() => {
    for (const o of origins.all) {
      o.reset();
      o.failWith(null);
    }
  });

  it("a fenced country's response carries X-Edge-Fence; an unfenced one's does not", async () => {
    await putMap();
    const de = await worker.dispatch("/v.m3u8", { country: "DE" });
    expect(de.status).toBe(200);
    expect(de.json<ReceivedRequest>().origin).toBe("fra-1");
    expect(de.headers.get("x-edge-fence")).toBe("eu");
    const us = await worker.dispatch("/v.m3u8", { country: "US" });
    expect(us.json<ReceivedRequest>().origin).toBe("use-1");
    expect(us.headers.get("x-edge-fence")).toBeNull();
  });

  it("a fenced country that follows _default (use-1) is served inside the fence", async () => {
    await putMap();
    const fr = await worker.dispatch("/", { country: "FR" });
    expect(fr.status).toBe(200);
    expect(fr.json<ReceivedRequest>().origin).toBe("par-1");
    expect(fr.headers.get("x-edge-fence")).toBe("eu");
    expect(origins.get("use-1").hits).toBe(0);
  });

  it("request-time failover never leaves the fenced chain, not even for FLOOR_POOL", async () => {
    await putMap();
    origins.get("fra-1").failWith(503);
    origins.get("ams-1").failWith(502);
    const res = await worker.dispatch("/seg.ts", { country: "DE" });
    // Every pool of the chain failed: the last one's answer, never use-1 (FLOOR_POOL).
    expect(res.status).toBe(502);
    expect(res.headers.get("x-edge-failover")).toBe("fra-1>ams-1");
    expect(res.headers.get("x-edge-fence")).toBe("eu");
    expect(origins.get("use-1").hits).toBe(0);
    expect(origins.get("par-1").hits).toBe(0);
  });

  it("a boost to a pool outside the fence changes nothing for the fenced country", async () => {
    await putMap({
      "override/DE": {
        primary: "fra-1",
        fallbacks: ["use-1"],
        weights: { "fra-1": 1, "use-1": 99 },
      },
    });
    for (let i = 0; i < 20; i++) {
      const res = await worker.dispatch("/", {
        country: "DE",
        headers: { "CF-Connecting-IP": `198.51.100.${i}` },
      });
      expect(res.json<ReceivedRequest>().origin).toBe("fra-1");
    }
    expect(origins.get("use-1").hits).toBe(0);
  });

  it("with no pool inside the fence the answer is 503, and no origin is asked", async () => {
    await putMap({
      "fence/eu": { continents: ["EU"], regions: ["mars"], floor: "par-1" },
    });
    const res = await worker.dispatch("/", { country: "DE" });
    expect(res.status).toBe(503);
    expect(res.headers.get("x-edge-fence")).toBe("eu");
    expect(res.headers.get("x-edge-degraded")).toBe("fence-unsatisfiable");
    for (const o of origins.all) expect(o.hits).toBe(0);
  });
});
