import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../../core/index.js";
import { type Origins, startOrigins } from "../../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../../testkit/worker.js";
import { emptyTally, mergeTally, type Tally } from "../../../worker/observe/tally.js";
import { tallyRowsOf } from "../../../worker/observe/tally-rows-shape.js";
import { buildMap } from "../../cases/routing-cases.js";
import { observationsWhen, rowOf, totalRequests } from "../../helpers/observations.js";

const TOKEN = "observe-token-for-tests";

describe("the edge counts cache results per (country, pool) (docs/reference.md §12, §14)", () => {
  let origins: Origins;
  let worker: TestWorker;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1"]);
    for (const pool of ["fra-1", "ams-1"]) {
      origins.get(pool).respond((req) =>
        req.url.startsWith("/seg/")
          ? {
              status: 200,
              headers: { "cache-control": "public, max-age=3600" },
              body: `segment ${req.url}`,
            }
          : undefined,
      );
    }
    worker = await startWorker({ OBSERVE_TOKEN: TOKEN, OBSERVE_FLUSH_SECONDS: "0" });
    const map = buildMap(
      {
        default: { chain: ["fra-1"], source: "country/_default" },
        countries: { BR: { chain: ["ams-1"], source: "country/BR" } },
      },
      { rev: 2, originOf: (p) => origins.get(p).url },
    );
    await worker.putMap(serializeMap(map));
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });

  it("counts HIT, MISS and BYPASS under the pool that the route names, and edge refusals in none", async () => {
    const seen: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await worker.dispatch("/seg/1.ts", { country: "DE" });
      seen.push(res.headers.get("x-edge-cache") ?? "");
    }
    // BR's pool is another origin; the copy is one per location, so BR's viewer hits too.
    const br = await worker.dispatch("/seg/1.ts", { country: "BR" });
    seen.push(br.headers.get("x-edge-cache") ?? "");
    const post = await worker.dispatch("/seg/1.ts", { country: "DE", method: "POST" });
    seen.push(post.headers.get("x-edge-cache") ?? "");
    expect(seen).toEqual(["MISS", "HIT", "HIT", "HIT", "BYPASS"]);
    // A loop the edge refuses never reaches the cache.
    const loop = await worker.dispatch("/seg/1.ts", {
      country: "DE",
      headers: { "X-Edge-Hop": "1" },
    });
    expect(loop.status).toBe(508);

    const body = await observationsWhen(worker, TOKEN, (b) => totalRequests(b) >= 6);
    expect(totalRequests(body)).toBe(6);
    expect(rowOf(body, "DE", "fra-1")?.cache).toEqual({ hit: 2, miss: 1, bypass: 1, stale: 0 });
    expect(rowOf(body, "BR", "ams-1")?.cache).toEqual({ hit: 1, miss: 0, bypass: 0, stale: 0 });
    expect(rowOf(body, "DE", "-")?.cache).toEqual({ hit: 0, miss: 0, bypass: 0, stale: 0 });
    expect(origins.get("fra-1").requests.filter((r) => r.url === "/seg/1.ts")).toHaveLength(2);
    expect(origins.get("ams-1").requests).toHaveLength(0);
  });
});

describe("a tally without cache counts (from an isolate that does not count them)", () => {
  const { cache: _omitted, ...old } = { ...emptyTally(), requests: 2 };
  old.outcomes[0] = 2;

  it("is a valid flush row, and merges as no cache results", () => {
    const rows = tallyRowsOf({ rows: [{ minute: 1, country: "DE", pool: "fra-1", tally: old }] });
    expect(rows).toHaveLength(1);
    const sum = emptyTally();
    mergeTally(sum, rows?.[0]?.tally as Tally);
    expect(sum.requests).toBe(2);
    expect(sum.cache).toEqual([0, 0, 0, 0]);
  });

  it("refuses cache counts of the wrong length", () => {
    const bad = { ...emptyTally(), cache: [1, 2] };
    expect(tallyRowsOf({ rows: [{ minute: 1, country: "DE", pool: "fra-1", tally: bad }] })).toBe(
      null,
    );
  });
});
