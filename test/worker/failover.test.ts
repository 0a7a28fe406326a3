import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import { type Origins, type ReceivedRequest, startOrigins } from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap, type MapSpec } from "../cases/routing-cases.js";

const BASE_MAP: MapSpec = {
  default: { chain: ["fra-1", "ams-1", "par-1"], source: "country/_default" },
  countries: {
    DE: { chain: ["dead-1", "ams-1"], source: "country/DE" },
    NL: { chain: ["dead-1", "dead-2"], source: "country/NL" },
    IT: { chain: ["fra-1", "ams-1"], source: "floor", degraded: "all-pools-unhealthy" },
  },
};

describe("request-time failover (MAX_ATTEMPTS=2)", () => {
  let origins: Origins;
  let worker: TestWorker;
  let rev = 1;
  const putMap = async () => {
    rev += 1;
    await worker.putMap(
      serializeMap(buildMap(BASE_MAP, { rev, originOf: (p) => origins.get(p).url })),
    );
  };

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1", "par-1", "dead-1", "dead-2"]);
    await origins.get("dead-1").kill();
    await origins.get("dead-2").kill();
    // Each request here must meet the dead origins: nothing is passed over (outlier-ejection.test.ts).
    worker = await startWorker({ MAX_ATTEMPTS: "2", EDGE_EJECT_AFTER: "0" });
    await putMap();
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });
  beforeEach(async () => {
    for (const o of origins.all) o.reset();
    await putMap();
  });

  it("moves on from a dead port to the next pool", async () => {
    const res = await worker.dispatch("/seg.ts?x=1", { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.json<ReceivedRequest>().origin).toBe("ams-1");
    expect(res.json<ReceivedRequest>().url).toBe("/seg.ts?x=1");
    expect(res.json<ReceivedRequest>().headers["x-edge-pool"]).toBe("ams-1");
    expect(res.headers.get("x-edge-pool")).toBe("ams-1");
    expect(res.headers.get("x-edge-failover")).toBe("dead-1>ams-1");
    expect(res.headers.get("x-edge-degraded")).toBe("origin-failover");
    expect(res.headers.get("x-edge-source")).toBe("country/DE");
  });

  it.each([502, 503, 504])("moves on from a %i", async (status) => {
    origins.get("fra-1").failWith(status);
    const res = await worker.dispatch("/", { country: "FR" });
    expect(res.status).toBe(200);
    expect(res.json<ReceivedRequest>().origin).toBe("ams-1");
    expect(res.headers.get("x-edge-failover")).toBe("fra-1>ams-1");
    expect(res.headers.get("x-edge-degraded")).toBe("origin-failover");
    expect(origins.get("fra-1").hits).toBe(1);
    expect(origins.get("ams-1").hits).toBe(1);
  });

  it("fails HEAD over too", async () => {
    origins.get("fra-1").failWith(503);
    const res = await worker.dispatch("/", { country: "FR", method: "HEAD" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edge-pool")).toBe("ams-1");
    expect(origins.get("ams-1").requests[0]?.method).toBe("HEAD");
  });

  it.each([500, 404, 429])("does not retry a %i", async (status) => {
    origins.get("fra-1").failWith(status);
    const res = await worker.dispatch("/", { country: "FR" });
    expect(res.status).toBe(status);
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
    expect(res.headers.get("x-edge-failover")).toBeNull();
    expect(res.headers.get("x-edge-degraded")).toBeNull();
    expect(origins.get("ams-1").hits).toBe(0);
  });

  it("never retries a POST: the 503 goes back to the client", async () => {
    origins.get("fra-1").failWith(503);
    const res = await worker.dispatch("/api", { country: "FR", method: "POST", body: "payload" });
    expect(res.status).toBe(503);
    expect(res.json<ReceivedRequest>().body).toBe("payload");
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
    expect(res.headers.get("x-edge-failover")).toBeNull();
    expect(origins.get("fra-1").hits).toBe(1);
    expect(origins.get("ams-1").hits).toBe(0);
  });

  it("never retries a POST to a dead origin: a plain 502", async () => {
    const res = await worker.dispatch("/api", { country: "DE", method: "POST", body: "x" });
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toContain("text/plain");
    expect(res.headers.get("x-edge-pool")).toBe("dead-1");
    expect(res.headers.get("x-edge-failover")).toBeNull();
    expect(origins.get("ams-1").hits).toBe(0);
  });

  it("stops after MAX_ATTEMPTS and returns the last origin response", async () => {
    origins.get("fra-1").failWith(503);
    origins.get("ams-1").failWith(504);
    const res = await worker.dispatch("/", { country: "FR" });
    expect(res.status).toBe(504);
    expect(res.json<ReceivedRequest>().origin).toBe("ams-1");
    expect(res.headers.get("x-edge-pool")).toBe("ams-1");
    expect(res.headers.get("x-edge-failover")).toBe("fra-1>ams-1");
    expect(res.headers.get("x-edge-degraded")).toBe("origin-failover");
    expect(origins.get("par-1").hits).toBe(0);
  });

  it("keeps an origin's answer over a later network error", async () => {
    const res = await worker.dispatch("/", { country: "DE" });
    expect(res.status).toBe(200);
    origins.get("ams-1").failWith(503);
    const spec: MapSpec = {
      default: { chain: ["ams-1", "dead-1"], source: "country/_default" },
    };
    rev += 1;
    await worker.putMap(serializeMap(buildMap(spec, { rev, originOf: (p) => origins.get(p).url })));
    const failed = await worker.dispatch("/", { country: "FR" });
    expect(failed.status).toBe(503);
    expect(failed.headers.get("x-edge-pool")).toBe("ams-1");
    expect(failed.headers.get("x-edge-failover")).toBe("ams-1>dead-1");
  });

  it("answers a plain 502, never a 500, when no origin answers at all", async () => {
    const res = await worker.dispatch("/", { country: "NL" });
    expect(res.status).toBe(502);
    expect(res.headers.get("content-type")).toContain("text/plain");
    expect(res.headers.get("x-edge-failover")).toBe("dead-1>dead-2");
    expect(res.headers.get("x-edge-degraded")).toBe("origin-failover");
    expect(res.body).not.toContain("127.0.0.1");
  });

  it("lists a compiled degraded reason before origin-failover", async () => {
    origins.get("fra-1").failWith(503);
    const res = await worker.dispatch("/", { country: "IT" });
    expect(res.headers.get("x-edge-degraded")).toBe("all-pools-unhealthy,origin-failover");
  });

  it("lists stale-map before origin-failover", async () => {
    await worker.putMap("{not json");
    origins.get("fra-1").failWith(503);
    const res = await worker.dispatch("/", { country: "FR" });
    expect(res.json<ReceivedRequest>().origin).toBe("ams-1");
    expect(res.headers.get("x-edge-degraded")).toBe("stale-map,origin-failover");
  });
});

describe("MAX_ATTEMPTS other than 2", () => {
  let origins: Origins;
  const workers: TestWorker[] = [];
  const spec: MapSpec = {
    default: { chain: ["fra-1", "ams-1", "par-1"], source: "country/_default" },
  };

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1", "par-1"]);
  });
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.dispose()));
    await origins?.close();
  });
  beforeEach(() => {
    for (const o of origins.all) o.reset();
  });

  async function workerWith(maxAttempts: string): Promise<TestWorker> {
    const w = await startWorker({ MAX_ATTEMPTS: maxAttempts });
    workers.push(w);
    await w.putMap(serializeMap(buildMap(spec, { rev: 1, originOf: (p) => origins.get(p).url })));
    return w;
  }

  it("MAX_ATTEMPTS=1 never fails over", async () => {
    const w = await workerWith("1");
    origins.get("fra-1").failWith(503);
    const res = await w.dispatch("/");
    expect(res.status).toBe(503);
    expect(res.headers.get("x-edge-failover")).toBeNull();
    expect(origins.get("ams-1").hits).toBe(0);
  });

  it("MAX_ATTEMPTS=3 walks the whole chain", async () => {
    const w = await workerWith("3");
    origins.get("fra-1").failWith(503);
    origins.get("ams-1").failWith(502);
    const res = await w.dispatch("/");
    expect(res.status).toBe(200);
    expect(res.json<ReceivedRequest>().origin).toBe("par-1");
    expect(res.headers.get("x-edge-failover")).toBe("fra-1>ams-1>par-1");
  });
});
