import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pickWeighted, type Route, resolveRoute } from "../../core/index.js";
import { splitHeader, splitRoute } from "../../worker/split.js";
import type { Cleanup } from "../lib/cleanup.js";
import { startOriginProcess } from "../lib/origin-process.js";
import {
  type PairedRatio,
  pairedRatio,
  SLICE,
  sideCpuUs,
  sideP99,
  sideRate,
  sliceCycles,
  slicedLoad,
  tallyOf,
} from "../lib/sliced-load.js";
import { round } from "../lib/stats.js";
import { seedLocalRoutes, workerBenchMap } from "../lib/worker-map.js";
import { EDGE_HOST, startBenchWorkerd } from "../lib/workerd.js";

/** Merged into `worker` in results.json: weighted routes against plain ones. */
export interface WeightedSplitResult {
  /**
   * Median over the sliced cycles of weighted req/s ÷ plain req/s in adjacent windows (goal
   * ≥ 0.95); `_ci95` its 95 % confidence interval, `_total` total over total.
   */
  readonly weighted_ratio: number;
  readonly weighted_ratio_ci95: readonly [number, number];
  readonly weighted_ratio_total: number;
  /** The same median (kept for older results). */
  readonly weighted_ratio_round_p50: number;
  /** CPU cost of the split itself (pick, reorder, header) per request, measured in process. */
  readonly weighted_split_ns: number;
  /**
   * The control: a second plain route (GB) against the plain one (FR), measured the same way.
   * Both do the same work, so its distance from 1 is what the machine alone does to such a ratio.
   */
  readonly weighted_aa_ratio: number;
  readonly weighted_aa_ratio_ci95: readonly [number, number];
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

/** Load plan, as the worker overhead section: sliced cycles on one workerd and one origin. */
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
  const map = workerBenchMap("/bench/weighted/", origin.url, (e) => {
    if (e.rel !== "country/DE") return e;
    const rule = JSON.parse(e.value) as { primary: string; fallbacks: string[] };
    const second = rule.fallbacks[0] ?? rule.primary;
    return {
      ...e,
      value: JSON.stringify({ ...rule, weights: { [rule.primary]: 80, [second]: 20 } }),
    };
  });
  const deRoute = resolveRoute(map, "DE");
  const weights = deRoute.weights;
  if (!weights || weights.length < 2) throw new Error("the fixture's DE route has no weights");
  const viewer = Array.from({ length: 1000 }, (_, i) => `bench-viewer-${i}`).find(
    (v) => pickWeighted(v, weights) !== deRoute.pool,
  );
  if (!viewer) throw new Error("no viewer picks the second pool");
  await seedLocalRoutes(persistDir, NAMESPACE, map);

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
  // FR sits in the middle of every cycle (DE·FR·GB, then mirrored), so each of its windows has
  // the weighted route's and the control's right beside it.
  const load = await slicedLoad({
    url: `${workerd.url}/video/segment-1.ts?q=1`,
    connections: o.connections,
    sides: (["DE", "FR", "GB"] as const).map((cc) => ({ name: cc, headers: headers(cc) })),
    cycles: sliceCycles(o),
    sliceMs: SLICE.sliceMs,
    guardMs: SLICE.guardMs,
    warmupMs: SLICE.warmupMs,
    cpuSeconds: workerd.cpuSeconds,
  });
  const [de, fr, gb] = [tallyOf(load, "DE"), tallyOf(load, "FR"), tallyOf(load, "GB")];
  const ratio = pairedRatio(de, fr);
  const aa = pairedRatio(gb, fr);
  const errors = load.errors + load.timeouts + de.non2xx + fr.non2xx + gb.non2xx;
  const splitNs = splitCostNs(deRoute, viewer);
  const cpuDe = sideCpuUs(de);
  const cpuFr = sideCpuUs(fr);
  const ci = (r: PairedRatio) => r.ci95.map((x) => x.toFixed(3)).join("–");
  o.log(
    `  ${sideRate(de).toFixed(0)} vs ${sideRate(fr).toFixed(0)} req/s (control ${sideRate(gb).toFixed(0)}); workerd CPU ${cpuDe.toFixed(0)} (weighted) vs ${cpuFr.toFixed(0)} (plain) µs per request (control ${sideCpuUs(gb).toFixed(0)})`,
  );
  o.log(`  split + X-Edge-Split cost in process: ${splitNs.toFixed(0)} ns per request`);
  o.log(
    `  weighted/plain throughput ratio ${ratio.p50.toFixed(3)} (95 % CI ${ci(ratio)}, total/total ${ratio.total.toFixed(3)}, ${ratio.cycles} cycles; goal ≥ 0.95)${ratio.p50 >= 0.95 ? "" : "  ✗ BELOW GOAL"}; control plain/plain ${aa.p50.toFixed(3)} (CI ${ci(aa)})`,
  );
  return {
    weighted_ratio: round(ratio.p50, 3),
    weighted_ratio_ci95: [round(ratio.ci95[0], 3), round(ratio.ci95[1], 3)],
    weighted_ratio_total: round(ratio.total, 3),
    weighted_ratio_round_p50: round(ratio.p50, 3),
    weighted_split_ns: round(splitNs, 0),
    weighted_aa_ratio: round(aa.p50, 3),
    weighted_aa_ratio_ci95: [round(aa.ci95[0], 3), round(aa.ci95[1], 3)],
    weighted_rps: round(sideRate(de), 0),
    plain_rps: round(sideRate(fr), 0),
    weighted_p99_ms: round(sideP99(de), 1),
    plain_p99_ms: round(sideP99(fr), 1),
    weighted_cpu_us_per_req: round(cpuDe, 0),
    plain_cpu_us_per_req: round(cpuFr, 0),
    weighted_rounds: ratio.cycles,
    weighted_errors: errors,
  };
}
