import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TTFB_BUCKETS_MS } from "../../core/index.js";
import { MinuteLedger } from "../../observer/minute-ledger.js";
import { ObserverMetrics } from "../../observer/observer-metrics.js";
import { ObserverStateFile } from "../../observer/observer-state-file.js";
import { parsePromText, sampleValue } from "../../testkit/prom-text.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "observer-state-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const cacheSample = async (m: ObserverMetrics, result: string) =>
  sampleValue(parsePromText(await m.registry.metrics()), "edge_viewer_cache_total", {
    country: "BR",
    pool: "us-east",
    result,
  });

describe("the observer's state file and the cache counters", () => {
  it("keeps edge_viewer_cache_total across a restart", async () => {
    const file = new ObserverStateFile(join(dir, "with-cache.json"));
    const first = new ObserverMetrics();
    first.add({
      country: "BR",
      pool: "us-east",
      outcomes: { ok: 9 },
      cache: { hit: 7, miss: 2 },
      starved: 0,
      failovers: 0,
      ttfb: [],
      ttfbSeconds: 0,
    });
    await file.save({ v: 2, ledger: new MinuteLedger().toJSON(), totals: first.totalsJson() });
    const { state, problem } = await file.load();
    expect(problem).toBeUndefined();
    const again = new ObserverMetrics();
    if (state) again.restore(state.totals);
    expect(await cacheSample(again, "hit")).toBe(7);
    expect(await cacheSample(again, "miss")).toBe(2);
  });

  it("takes a file written before cache results were counted", async () => {
    const path = join(dir, "old.json");
    const seen = {
      requests: 3,
      outcomes: { ok: 3 },
      starved: 0,
      failovers: 0,
      ttfb: new Array<number>(TTFB_BUCKETS_MS.length + 1).fill(0),
      ttfbSumMs: 0,
    };
    await writeFile(
      path,
      JSON.stringify({
        v: 2,
        ledger: { minutes: [[29_000_000, [["BR/us-east", seen]]]] },
        totals: {
          requests: [{ country: "BR", pool: "us-east", outcome: "ok", n: 3 }],
          starved: [],
          failovers: [],
          ttfb: [],
        },
      }),
    );
    const { state, problem } = await new ObserverStateFile(path).load();
    expect(problem).toBeUndefined();
    const m = new ObserverMetrics();
    if (state) m.restore(state.totals);
    expect(await cacheSample(m, "hit")).toBeUndefined();
    expect(
      sampleValue(parsePromText(await m.registry.metrics()), "edge_viewer_requests_total", {
        country: "BR",
        pool: "us-east",
        outcome: "ok",
      }),
    ).toBe(3);
  });
});
