import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import { type Origins, startOrigins } from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap, CASE_POOLS, ROUTING_CASES } from "../cases/routing-cases.js";

describe("shared routing cases through the Worker in workerd", () => {
  let origins: Origins;
  let worker: TestWorker;
  let rev = 100;

  beforeAll(async () => {
    origins = await startOrigins(CASE_POOLS);
    worker = await startWorker({ ISOLATE_CACHE_SECONDS: "0" });
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });

  it.each(ROUTING_CASES)("$name", async (c) => {
    rev += 1;
    await worker.putMap(
      serializeMap(buildMap(c.map, { rev, originOf: (p) => origins.get(p).url })),
    );
    const res = await worker.dispatch("/case", { country: c.cfCountry });
    expect(res.status).toBe(200);
    expect({
      country: res.headers.get("x-edge-country"),
      pool: res.headers.get("x-edge-pool"),
      source: res.headers.get("x-edge-source"),
      degraded: res.headers.get("x-edge-degraded"),
    }).toEqual(c.expect);
    expect(res.headers.get("x-edge-revision")).toBe(String(rev));
    // The request really reached the expected pool's origin.
    expect(res.json<{ origin: string }>().origin).toBe(c.expect.pool);
  });
});
