import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../../core/index.js";
import { type Origins, startOrigins } from "../../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../../testkit/worker.js";
import { buildMap } from "../../cases/routing-cases.js";

const ENTRY = fileURLToPath(new URL("../../../bench/workers/faulty-cache.ts", import.meta.url));

describe("a location cache that errors, answers slowly or hangs never fails a request", () => {
  let origins: Origins;
  let worker: TestWorker;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1"]);
    origins.get("fra-1").respond((req) => ({
      status: 200,
      headers: { "cache-control": "max-age=600" },
      body: `segment ${req.url}`,
    }));
    worker = await startWorker(
      { ORIGIN_TIMEOUT_MS: "1000" },
      { entry: ENTRY, observations: false },
    );
    const map = buildMap(
      { default: { chain: ["fra-1"], source: "country/_default" } },
      { rev: 1, originOf: (p) => origins.get(p).url },
    );
    await worker.putMap(serializeMap(map));
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });

  it.each(["error", "slow", "hang"])(
    "cache %s: every request is served from the origin, as a MISS",
    async (fault) => {
      const before = origins.get("fra-1").hits;
      // Concurrent viewers of one key: the ones collapsed behind a hung store go on by themselves.
      const all = await Promise.all(
        Array.from({ length: 5 }, () => worker.dispatch(`/${fault}/seg-1.ts`)),
      );
      for (const res of all) {
        expect(res.status, res.body).toBe(200);
        expect(res.body).toBe(`segment /${fault}/seg-1.ts`);
        expect(res.headers.get("x-edge-cache")).toBe("MISS");
      }
      const again = await worker.dispatch(`/${fault}/seg-1.ts`);
      expect(again.status).toBe(200);
      expect(again.headers.get("x-edge-cache")).toBe("MISS");
      expect(origins.get("fra-1").hits - before).toBeGreaterThanOrEqual(2);
    },
  );

  it("the same Worker caches where the cache works", async () => {
    await worker.dispatch("/fine/seg-1.ts");
    const res = await worker.dispatch("/fine/seg-1.ts");
    expect(res.headers.get("x-edge-cache")).toBe("HIT");
  });
});
