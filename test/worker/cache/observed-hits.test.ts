import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../../core/index.js";
import { type Origins, startOrigins } from "../../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../../testkit/worker.js";
import { buildMap } from "../../cases/routing-cases.js";
import { observationsWhen, rowOf } from "../../helpers/observations.js";

const TOKEN = "observe-cache-token";

describe("what viewers get, with the edge cache answering", () => {
  let origins: Origins;
  let worker: TestWorker;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1"]);
    origins.get("fra-1").respond(() => ({
      status: 200,
      headers: { "cache-control": "max-age=600" },
      body: "segment",
      delayMs: 30,
    }));
    worker = await startWorker({ OBSERVE_TOKEN: TOKEN, OBSERVE_FLUSH_SECONDS: "0" });
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

  it("counts every request, but only origin fetches as the pool's time to first byte", async () => {
    for (let i = 0; i < 5; i++) await worker.dispatch("/seg/observed.ts", { country: "DE" });
    expect(origins.get("fra-1").hits).toBe(1);
    const body = await observationsWhen(
      worker,
      TOKEN,
      (b) => (rowOf(b, "DE", "fra-1")?.requests ?? 0) >= 5,
    );
    const row = rowOf(body, "DE", "fra-1");
    expect(row?.requests).toBe(5);
    // One TTFB sample: the MISS. Four HITs would otherwise say the pool answers in no time.
    expect(row?.ttfb_counts.reduce((n, c) => n + c, 0)).toBe(1);
  });
});
