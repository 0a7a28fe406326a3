import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../../core/index.js";
import { type Origins, type ReceivedRequest, startOrigins } from "../../../testkit/origins.js";
import { startWorker } from "../../../testkit/worker.js";
import { buildMap } from "../../cases/routing-cases.js";

const TOKEN = "observe-token-for-tests";
const FIXTURE = new URL("../fixtures/failing-aggregators.js", import.meta.url);

describe.each([
  ["never answers", "HangingAggregator"],
  ["throws", "ThrowingAggregator"],
  ["cannot start", "UnbuildableAggregator"],
])("an aggregator that %s leaves every response untouched", (_, className) => {
  let origins: Origins;
  let script: string;
  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1"]);
    script = await readFile(FIXTURE, "utf8");
  });
  afterAll(async () => {
    await origins?.close();
  });

  it("serves viewers as without recording, and the endpoint says the aggregator is unavailable", async () => {
    const worker = await startWorker(
      { OBSERVE_TOKEN: TOKEN, OBSERVE_FLUSH_SECONDS: "0" },
      { observations: { script, className } },
    );
    try {
      const map = buildMap(
        { default: { chain: ["fra-1", "ams-1"], source: "country/_default" }, countries: {} },
        { rev: 2, originOf: (p) => origins.get(p).url },
      );
      await worker.putMap(serializeMap(map));
      // Every request flushes (OBSERVE_FLUSH_SECONDS=0): a flush the response waited for would
      // never end with the hanging aggregator, and would fail with the others.
      for (let i = 0; i < 20; i++) {
        const res = await worker.dispatch(`/seg-${i}.ts`, { country: "BR" });
        expect(res.status).toBe(200);
        expect(res.json<ReceivedRequest>().url).toBe(`/seg-${i}.ts`);
        expect(res.headers.get("x-edge-pool")).toBe("fra-1");
        expect(res.headers.get("x-edge-degraded")).toBeNull();
      }
      const obs = await worker.dispatch("/__edge/observations", {
        headers: { Authorization: `Bearer ${TOKEN}` },
      });
      expect(obs.status).toBe(503);
      expect(obs.json<{ error: string }>().error).toBe("aggregator-unavailable");
    } finally {
      await worker.dispose();
    }
  });
});

describe("a Worker deployed without the OBSERVATIONS binding", () => {
  it("serves viewers, and the endpoint names the missing binding", async () => {
    const origins = await startOrigins(["fra-1"]);
    const worker = await startWorker({ OBSERVE_TOKEN: TOKEN }, { observations: false });
    try {
      const map = buildMap(
        { default: { chain: ["fra-1"], source: "country/_default" }, countries: {} },
        { rev: 2, originOf: (p) => origins.get(p).url },
      );
      await worker.putMap(serializeMap(map));
      expect((await worker.dispatch("/x", { country: "DE" })).status).toBe(200);
      const obs = await worker.dispatch("/__edge/observations", {
        headers: { Authorization: `Bearer ${TOKEN}` },
      });
      expect(obs.status).toBe(503);
      expect(obs.json<{ error: string }>().error).toBe("aggregator-missing");
    } finally {
      await worker.dispose();
      await origins.close();
    }
  });
});
