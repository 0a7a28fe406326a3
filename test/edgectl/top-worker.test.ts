import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import { TopShape } from "../../edgectl/output/shapes/top-shape.js";
import { type Origins, startOrigins } from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap } from "../cases/routing-cases.js";
import { observationsWhen } from "../helpers/observations.js";
import { runCli, uniquePrefix, useCliSuite } from "./cli-harness.js";

const TOKEN = "top-worker-token-3b7a";
const suite = useCliSuite();

// edgectl top against the real Worker in workerd: the document it reads is the edge's own.
describe("edgectl top on the real edge", () => {
  let origins: Origins;
  let worker: TestWorker;
  let edgeUrl: string;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1"]);
    origins
      .get("fra-1")
      .respond((req) => (req.url.startsWith("/fail") ? { status: 503, body: "down" } : undefined));
    worker = await startWorker({ OBSERVE_TOKEN: TOKEN, OBSERVE_FLUSH_SECONDS: "0" });
    const spec = {
      default: { chain: ["ams-1"], source: "country/_default" },
      countries: { DE: { chain: ["fra-1"], source: "country/DE" } },
    };
    await worker.putMap(
      serializeMap(buildMap(spec, { rev: 2, originOf: (p) => origins.get(p).url })),
    );
    edgeUrl = (await worker.mf.ready).origin;
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });

  it("shows each country's requests, errors and TTFB beside the checkers' p90", async () => {
    for (let i = 0; i < 8; i++) await worker.dispatch(`/seg${i}`, { country: "DE" });
    for (let i = 0; i < 2; i++) await worker.dispatch(`/fail${i}`, { country: "DE" });
    for (let i = 0; i < 4; i++) await worker.dispatch(`/seg${i}`, { country: "FR" });
    await observationsWhen(worker, TOKEN, (b) => b.rows.reduce((n, r) => n + r.requests, 0) >= 14);
    const prefix = uniquePrefix("top-worker");
    await suite.client.put(`${prefix}health/fra-1`).value('{"status":"healthy","p90_ms":35}');
    const env = suite.envFor(prefix, { OBSERVE_TOKEN: TOKEN, EDGE_URL: edgeUrl });

    const r = await runCli(["top", "DE", "FR", "-o", "json"], { env });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const out = TopShape.parse(JSON.parse(r.stdout));
    expect(out.window_s).toBe(60);
    expect(out.rows.map((x) => [x.country, x.pool, x.error_ratio, x.checkers_p90_ms])).toEqual([
      ["DE", "fra-1", 0.2, 35],
      ["FR", "ams-1", 0, null],
    ]);
    for (const row of out.rows) {
      expect(row.requests_per_s).toBeGreaterThan(0);
      expect(row.ttfb_ms.p90).not.toBeNull();
    }

    const wrong = await runCli(["top", "-o", "json"], { env: { ...env, OBSERVE_TOKEN: "nope" } });
    expect(wrong.code).toBe(1);
    expect(JSON.parse(wrong.stdout).error.code).toBe("unauthorized");
  });
});
