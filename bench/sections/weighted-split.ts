import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { createLocalSink } from "../../adapters/kv/index.js";
import { compile, pickWeighted, type Route, resolveRoute, serializeMap } from "../../core/index.js";
import { splitHeader, splitRoute } from "../../worker/split.js";
import type { Cleanup } from "../lib/cleanup.js";
import { scaleFixture } from "../lib/fixture.js";
import { startOriginProcess } from "../lib/origin-process.js";
import { round, summarize } from "../lib/stats.js";
import { EDGE_HOST, startBenchWorkerd } from "../lib/workerd.js";

/** Merged into `worker` in results.json: weighted routes against plain ones. */
export interface WeightedSplitResult {
  /** Median over rounds of weighted req/s ÷ plain req/s (goal ≥ 0.95). */
  readonly weighted_ratio: number;
  /** Median of the per-round ratios (noisier on a shared machine; for comparison). */
  readonly weighted_ratio_round_p50: number;
  /** CPU cost of the split itself (pick, reorder, header) per request, measured in process. */
  readonly weighted_split_ns: number;
  /**
   * The control: a second plain route (GB) against the plain one (FR) in the same rounds. Both
   * do the same work, so its distance from 1 is what the machine alone does to such a ratio.
   */
  readonly weighted_aa_ratio: number;
  readonly weighted_rps: number;
  readonly plain_rps: number;
  readonly weighted_p99_ms: number;
  readonly plain_p99_ms: number;
  /** workerd CPU per request on each side: the split's cost as workerd pays it. */
  readonly weighted_cpu_us_per_req: number;
  readonly plain_cpu_us_per_req: number;
  readonly weighted_rounds: number;
  readonly weighted_errors: number;
}

/** Round plan, as the worker overhead section: A/B/A/B on one workerd and one origin. */
export interface WeightedSplitOptions {
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const NAMESPACE = "bench-weighted";

/**
 * Nanoseconds of CPU per request for the Worker's split work (pick, the route for the pick,
 * `X-Edge-Split`), over 200,000 distinct viewers. CPU time, not wall time: on a shared machine
 * the process may wait for a core, and that wait is not the split's.
 */
function splitCostNs(route: Route, viewer: string): number {
  const n = 200_000;
  const keys = Array.from({ length: n }, (_, i) => `${viewer}-${i}`);
  let sink = 0;
  const start = process.cpuUsage();
  for (const key of keys) {
    sink += splitRoute(route, key).chain.length;
    sink += splitHeader(route.weights ?? []).length;
  }
  const used = process.cpuUsage(start);
  const ns = ((used.user + used.system) * 1000) / n;
  return sink > 0 ? ns : Number.NaN;
}
const TOKEN = "bench-weighted-debug-token";

/**
 * The routing Worker on a weighted route (DE: 80/20 over its first two pools, the viewer's pick
 * not the primary, so the chain is reordered on every request) against a plain route (FR), same
 * map, same workerd, same origin; both requests carry the same debug headers.
 */
export async function weightedSplit(o: WeightedSplitOptions): Promise<WeightedSplitResult> {
  const persistDir = mkdtempSync(join(tmpdir(), "edge-bench-weighted-"));
  o.cleanup.add("weighted persist dir", () => rmSync(persistDir, { recursive: true, force: true }));
  const origin = await startOriginProcess(o.cleanup);
  const prefix = "/bench/weighted/";
  const entries = scaleFixture({ keys: 0, pools: 20, origin: () => origin.url }).map((e) => {
    if (e.rel !== "country/DE") return e;
    const rule = JSON.parse(e.value) as { primary: string; fallbacks: string[] };
    const second = rule.fallbacks[0] ?? rule.primary;
    return {
      ...e,
      value: JSON.stringify({ ...rule, weights: { [rule.primary]: 80, [second]: 20 } }),
    };
  });
  const map = compile(
    { revision: 1, entries: entries.map((e) => ({ key: prefix + e.rel, value: e.value })) },
    { prefix, floorPool: "p000", originTemplate: origin.url, now: new Date() },
  ).map;
  const de = resolveRoute(map, "DE");
  const weights = de.weights;
  if (!weights || weights.length < 2) throw new Error("the fixture's DE route has no weights");
  const viewer = Array.from({ length: 1000 }, (_, i) => `bench-viewer-${i}`).find(
    (v) => pickWeighted(v, weights) !== de.pool,
  );
  if (!viewer) throw new Error("no viewer picks the second pool");
  const writer = await createLocalSink({ persistDir, namespaceId: NAMESPACE });
  await writer.putMany([{ key: "routes", value: serializeMap(map) }]);
  await writer.close();

  const workerd = await startBenchWorkerd({
    persistDir,
    namespaceId: NAMESPACE,
    passOrigin: origin.url,
    vars: { DEBUG_TOKEN: TOKEN },
    cleanup: o.cleanup,
  });
  const headers = (cc: string) => ({
    host: EDGE_HOST,
    "x-edge-debug-token": TOKEN,
    "x-edge-debug-country": cc,
    "x-edge-debug-viewer": viewer,
  });
  const cpu = { DE: 0, FR: 0, GB: 0, reqsDE: 0, reqsFR: 0, reqsGB: 0 };
  const run = async (cc: "DE" | "FR" | "GB", seconds: number) => {
    const before = workerd.cpuSeconds();
    const r = await autocannon({
      url: `${workerd.url}/video/segment-1.ts?q=1`,
      connections: o.connections,
      duration: seconds,
      headers: headers(cc),
    });
    cpu[cc] += workerd.cpuSeconds() - before;
    cpu[`reqs${cc}`] += r.requests.total;
    return r;
  };

  // Sanity: DE is split (and the viewer's pick served it), FR is not.
  const check = async (cc: string) => {
    const res = await fetch(`${workerd.url}/check`, { headers: headers(cc) });
    await res.arrayBuffer();
    return { pool: res.headers.get("x-edge-pool"), split: res.headers.get("x-edge-split") };
  };
  const [w, p, q] = [await check("DE"), await check("FR"), await check("GB")];
  if (!w.split || w.pool !== pickWeighted(viewer, weights))
    throw new Error(`the weighted route did not split (${JSON.stringify(w)})`);
  if (p.split || q.split) throw new Error("a plain route carries X-Edge-Split");
  await run("DE", 2);
  await run("FR", 2);
  await run("GB", 2);
  Object.assign(cpu, { DE: 0, FR: 0, GB: 0, reqsDE: 0, reqsFR: 0, reqsGB: 0 });

  const ratios: number[] = [];
  const a: number[] = [];
  const b: number[] = [];
  const ap99: number[] = [];
  const bp99: number[] = [];
  const control: number[] = [];
  let errors = 0;
  // Short rounds, four times as many, in mirrored order: on a shared 2-core machine a
  // neighbour's burst then lands on every side alike.
  const rounds = o.rounds * 4;
  const seconds = Math.max(2, Math.round(o.seconds / 2));
  for (let i = 0; i < rounds; i++) {
    // DE·FR·GB, then GB·FR·DE: the weighted route and the control swap ends, FR sits between.
    const order = i % 2 === 0 ? (["DE", "FR", "GB"] as const) : (["GB", "FR", "DE"] as const);
    const got: Partial<Record<"DE" | "FR" | "GB", Awaited<ReturnType<typeof run>>>> = {};
    for (const cc of order) got[cc] = await run(cc, seconds);
    const { DE: x, FR: y, GB: z } = got;
    if (!x || !y || !z) throw new Error("a round missed a side");
    errors += z.errors + z.timeouts + z.non2xx;
    control.push(z.requests.average);
    errors += x.errors + x.timeouts + x.non2xx + y.errors + y.timeouts + y.non2xx;
    ratios.push(x.requests.average / y.requests.average);
    a.push(x.requests.average);
    b.push(y.requests.average);
    ap99.push(x.latency.p99);
    bp99.push(y.latency.p99);
    o.log(
      `  round ${i + 1}/${rounds}: weighted ${x.requests.average.toFixed(0)} req/s, plain ${y.requests.average.toFixed(0)} req/s, control ${z.requests.average.toFixed(0)} req/s`,
    );
  }
  // Total over total: with ABBA order a drift in the machine's load cancels out of the sums,
  // where a median of 2-second pair ratios still follows a neighbour's bursts.
  const sum = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
  const ratio = round(sum(a) / sum(b), 3);
  const aa = round(sum(control) / sum(b), 3);
  const splitNs = splitCostNs(de, viewer);
  const cpuDe = (cpu.DE * 1e6) / cpu.reqsDE;
  const cpuFr = (cpu.FR * 1e6) / cpu.reqsFR;
  o.log(
    `  pairs ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}; workerd CPU ${cpuDe.toFixed(0)} (weighted) vs ${cpuFr.toFixed(0)} (plain) µs per request`,
  );
  o.log(`  split + X-Edge-Split cost in process: ${splitNs.toFixed(0)} ns per request`);
  o.log(
    `  weighted/plain throughput ratio ${ratio} (goal ≥ 0.95)${ratio >= 0.95 ? "" : "  ✗ BELOW GOAL"}; control plain/plain ${aa}`,
  );
  return {
    weighted_ratio: ratio,
    weighted_ratio_round_p50: round(summarize(ratios).p50, 3),
    weighted_split_ns: round(splitNs, 0),
    weighted_aa_ratio: aa,
    weighted_rps: round(summarize(a).p50, 0),
    plain_rps: round(summarize(b).p50, 0),
    weighted_p99_ms: round(summarize(ap99).p50, 1),
    plain_p99_ms: round(summarize(bp99).p50, 1),
    weighted_cpu_us_per_req: round(cpuDe, 0),
    plain_cpu_us_per_req: round(cpuFr, 0),
    weighted_rounds: rounds,
    weighted_errors: errors,
  };
}
