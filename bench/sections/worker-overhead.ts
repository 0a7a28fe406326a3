import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Cleanup } from "../lib/cleanup.js";
import type { FixtureEntry } from "../lib/fixture.js";
import { httpGet } from "../lib/http-get.js";
import { startOriginProcess } from "../lib/origin-process.js";
import {
  type PairedDifference,
  pairedDifference,
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
import {
  EDGE_HOST,
  FLOOR_HOST,
  PASS_HOST,
  SIGNED_HOST,
  startBenchWorkerd,
} from "../lib/workerd.js";
import { type WorkerLatencyResult, workerLatency } from "./worker-latency.js";
import { mapRefresh } from "./worker-map-refresh.js";
import type { WorkerOverheadResult } from "./worker-overhead-result.js";

/** Load plan: `rounds × seconds` scales the number of sliced cycles (see `sliceCycles`). */
export interface WorkerOverheadOptions {
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const NAMESPACE = "bench-worker";
/** Market attributes every bench route carries (docs/reference.md §11). */
const BENCH_ATTRS = { "cdn-host": "cdn-eu.example.com", tier: "gold", tokenizer: "de" };

/**
 * Routing Worker (KV map, isolate cache, country lookup, edge headers) vs a pass-through Worker
 * with the same proxy code and a fixed origin, same workerd, same loopback origin, same load; and
 * vs the contract floor (the pass-through plus the country read and the edge's response headers).
 */
export async function workerOverhead(o: WorkerOverheadOptions): Promise<WorkerOverheadResult> {
  const persistDir = mkdtempSync(join(tmpdir(), "edge-bench-worker-"));
  o.cleanup.add("worker persist dir", () => rmSync(persistDir, { recursive: true, force: true }));
  const origin = await startOriginProcess(o.cleanup);

  // Every route carries three market attributes: each side sends them as X-Edge-Attr-*.
  const withAttrs = (e: FixtureEntry): FixtureEntry =>
    e.rel.startsWith("country/")
      ? { ...e, value: JSON.stringify({ ...JSON.parse(e.value), attrs: BENCH_ATTRS }) }
      : e;
  await seedLocalRoutes(
    persistDir,
    NAMESPACE,
    workerBenchMap("/bench/worker/", origin.url, withAttrs),
  );

  const workerd = await startBenchWorkerd({
    persistDir,
    namespaceId: NAMESPACE,
    passOrigin: origin.url,
    vars: {},
    floor: true,
    signedVars: { ORIGIN_SIGNING_KEY: "bench-signing-key-0123456789abcdef" },
    cleanup: o.cleanup,
  });

  // Sanity: each answers 200 through its own Worker.
  for (const host of [EDGE_HOST, PASS_HOST, FLOOR_HOST, SIGNED_HOST]) {
    const res = await httpGet(`${workerd.url}/check`, host);
    if (res.status !== 200) throw new Error(`${host} answered ${res.status}: ${res.body}`);
    if (host === EDGE_HOST && !res.headers["x-edge-pool"]) {
      throw new Error("the routing Worker did not route (no X-Edge-Pool)");
    }
    if (host === PASS_HOST && res.headers["x-edge-pool"]) {
      throw new Error("the pass-through Worker answered with routing headers");
    }
    // Both do the contract's two parts: the country read from request.cf, the rebuilt response.
    const cc = res.headers["x-edge-country"];
    if (host !== PASS_HOST && (typeof cc !== "string" || !/^[A-Z]{2}$/.test(cc) || cc === "XX")) {
      throw new Error(`${host} answered without a country from request.cf (${String(cc)})`);
    }
  }

  // Each comparison's two sides sit close in the slice order (signed·routing·floor·pass·control,
  // then mirrored): signing beside routing, routing beside the floor, the control beside the pass.
  const load = await slicedLoad({
    url: `${workerd.url}/video/segment-1.ts?q=1`,
    connections: o.connections,
    sides: [
      { name: "signed", headers: { host: SIGNED_HOST } },
      { name: "routing", headers: { host: EDGE_HOST } },
      { name: "floor", headers: { host: FLOOR_HOST } },
      { name: "pass", headers: { host: PASS_HOST } },
      { name: "control", headers: { host: PASS_HOST } },
    ],
    cycles: sliceCycles(o),
    sliceMs: SLICE.sliceMs,
    guardMs: SLICE.guardMs,
    warmupMs: SLICE.warmupMs,
    cpuSeconds: workerd.cpuSeconds,
  });
  const edge = tallyOf(load, "routing");
  const pass = tallyOf(load, "pass");
  const control = tallyOf(load, "control");
  const floor = tallyOf(load, "floor");
  const signed = tallyOf(load, "signed");
  const signedVsFloor = pairedRatio(signed, floor);
  const ratio = pairedRatio(edge, pass);
  const aa = pairedRatio(control, pass);
  const floorRatio = pairedRatio(floor, pass);
  const vsFloor = pairedRatio(edge, floor);
  const errors =
    load.errors +
    load.timeouts +
    edge.non2xx +
    pass.non2xx +
    control.non2xx +
    floor.non2xx +
    signed.non2xx;
  const ci = (r: { ci95: readonly [number, number] }) => r.ci95.map((x) => x.toFixed(3)).join("–");
  const edgeCpuUs = sideCpuUs(edge);
  const passCpuUs = sideCpuUs(pass);
  const floorCpuUs = sideCpuUs(floor);
  o.log(
    `  routing/pass-through ${ratio.p50.toFixed(3)} (95 % CI ${ratio.ci95.map((x) => x.toFixed(3)).join("–")}, total/total ${ratio.total.toFixed(3)}, ${ratio.cycles} cycles); control pass/pass ${aa.p50.toFixed(3)} (CI ${aa.ci95.map((x) => x.toFixed(3)).join("–")})`,
  );
  o.log(
    `  contract floor/pass-through ${floorRatio.p50.toFixed(3)} (CI ${ci(floorRatio)}); routing/contract floor ${vsFloor.p50.toFixed(3)} (CI ${ci(vsFloor)})`,
  );
  o.log(
    `  ${sideRate(edge).toFixed(0)} vs ${sideRate(pass).toFixed(0)} req/s (floor ${sideRate(floor).toFixed(0)}); workerd CPU ${edgeCpuUs.toFixed(0)} vs ${passCpuUs.toFixed(0)} µs per request (floor ${floorCpuUs.toFixed(0)}: routing ${(edgeCpuUs - floorCpuUs).toFixed(0)} µs over it; control ${sideCpuUs(control).toFixed(0)})`,
  );
  const overFloor = pairedDifference(edge, floor);
  const aaCpu = pairedDifference(control, pass);
  const signCpu = pairedDifference(signed, edge);
  const us = (d: PairedDifference) =>
    `${d.p50.toFixed(0)} µs (CI ${d.ci95.map((x) => x.toFixed(0)).join("–")}, total/total ${d.total.toFixed(0)})`;
  o.log(
    `  CPU per request, paired windows: routing − floor ${us(overFloor)}; control − pass ${us(aaCpu)}`,
  );
  o.log(
    `  signing: ${sideCpuUs(signed).toFixed(0)} vs ${edgeCpuUs.toFixed(0)} µs per request, signed − routing ${us(signCpu)}; signed/contract floor ${signedVsFloor.p50.toFixed(3)} (CI ${ci(signedVsFloor)})`,
  );
  // Throughput is measured; now latency, in its own workerd (this one idles meanwhile).
  const rss = workerd.rssMb();
  const own = new Cleanup();
  let latency: WorkerLatencyResult;
  try {
    latency = await workerLatency({
      seconds: o.seconds * 2,
      connections: 4,
      cleanup: own,
      log: o.log,
    });
  } finally {
    await own.runAll();
  }
  const refresh = mapRefresh({ runs: o.rounds * 100 });
  o.log(
    `  map refresh (parse + validate, 252 routes): p50 ${refresh.p50} ms, max ${refresh.max} ms`,
  );

  // Medians: one round disturbed by a neighbour on the shared machine must not set the figure.
  return {
    ...latency,
    map_refresh_ms: refresh,
    rps: round(sideRate(edge), 0),
    baseline_rps: round(sideRate(pass), 0),
    ratio: round(ratio.p50, 3),
    ratio_ci95: [round(ratio.ci95[0], 3), round(ratio.ci95[1], 3)],
    ratio_total: round(ratio.total, 3),
    ratio_round_p50: round(ratio.p50, 3),
    ratio_round_min: round(ratio.min, 3),
    ratio_round_max: round(ratio.max, 3),
    aa_ratio: round(aa.p50, 3),
    aa_ratio_ci95: [round(aa.ci95[0], 3), round(aa.ci95[1], 3)],
    floor_rps: round(sideRate(floor), 0),
    floor_ratio: round(floorRatio.p50, 3),
    floor_ratio_ci95: [round(floorRatio.ci95[0], 3), round(floorRatio.ci95[1], 3)],
    ratio_vs_floor: round(vsFloor.p50, 3),
    ratio_vs_floor_ci95: [round(vsFloor.ci95[0], 3), round(vsFloor.ci95[1], 3)],
    signed_ratio_vs_floor: round(signedVsFloor.p50, 3),
    signed_ratio_vs_floor_ci95: [round(signedVsFloor.ci95[0], 3), round(signedVsFloor.ci95[1], 3)],
    sign_us: round(signCpu.p50, 0),
    sign_us_ci95: [round(signCpu.ci95[0], 0), round(signCpu.ci95[1], 0)],
    workerd_cpu_us_per_req: round(edgeCpuUs, 0),
    baseline_workerd_cpu_us_per_req: round(passCpuUs, 0),
    floor_workerd_cpu_us_per_req: round(floorCpuUs, 0),
    cpu_us_over_floor: round(overFloor.p50, 0),
    cpu_us_over_floor_ci95: [round(overFloor.ci95[0], 0), round(overFloor.ci95[1], 0)],
    cpu_us_over_floor_total: round(overFloor.total, 0),
    aa_cpu_us: round(aaCpu.p50, 0),
    aa_cpu_us_ci95: [round(aaCpu.ci95[0], 0), round(aaCpu.ci95[1], 0)],
    signed_workerd_cpu_us_per_req: round(sideCpuUs(signed), 0),
    p99_ms: round(sideP99(edge), 1),
    baseline_p99_ms: round(sideP99(pass), 1),
    rounds: ratio.cycles,
    round_seconds: SLICE.sliceMs / 1000,
    connections: o.connections,
    errors,
    workerd_rss_mb: round(rss, 1),
  };
}
