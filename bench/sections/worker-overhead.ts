import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import autocannon from "autocannon";
import { createLocalSink } from "../../adapters/kv/index.js";
import { compile, serializeMap } from "../../core/index.js";
import { Cleanup } from "../lib/cleanup.js";
import { scaleFixture } from "../lib/fixture.js";
import { httpGet } from "../lib/http-get.js";
import { startOriginProcess } from "../lib/origin-process.js";
import { round, summarize } from "../lib/stats.js";
import { EDGE_HOST, PASS_HOST, startBenchWorkerd } from "../lib/workerd.js";
import { type WorkerLatencyResult, workerLatency } from "./worker-latency.js";
import { type MapRefreshResult, mapRefresh } from "./worker-map-refresh.js";

/** `worker` in results.json. */
export interface WorkerOverheadResult extends WorkerLatencyResult {
  readonly map_refresh_ms: MapRefreshResult;
  readonly rps: number;
  readonly baseline_rps: number;
  /** Total routing requests ÷ total pass-through requests over the ABBA rounds (goal ≥ 0.95). */
  readonly ratio: number;
  /** Median of the per-pair ratios, and their spread: how much the machine moved them. */
  readonly ratio_round_p50: number;
  readonly ratio_round_min: number;
  readonly ratio_round_max: number;
  /** workerd CPU per request on each side (its own cost; a neighbour's load moves it less). */
  readonly workerd_cpu_us_per_req: number;
  readonly baseline_workerd_cpu_us_per_req: number;
  readonly p99_ms: number;
  readonly baseline_p99_ms: number;
  readonly rounds: number;
  readonly round_seconds: number;
  readonly connections: number;
  readonly errors: number;
  readonly workerd_rss_mb: number;
}

/** Round plan: `rounds` pairs in ABBA order, so drift in the machine's load hits both sides alike. */
export interface WorkerOverheadOptions {
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const NAMESPACE = "bench-worker";

/**
 * Routing Worker (KV map, isolate cache, country lookup, edge headers) vs a pass-through Worker
 * with the same proxy code and a fixed origin, same workerd, same loopback origin, same load.
 */
export async function workerOverhead(o: WorkerOverheadOptions): Promise<WorkerOverheadResult> {
  const persistDir = mkdtempSync(join(tmpdir(), "edge-bench-worker-"));
  o.cleanup.add("worker persist dir", () => rmSync(persistDir, { recursive: true, force: true }));
  const origin = await startOriginProcess(o.cleanup);

  // A realistic map: every ISO country with a 4-pool chain, all pools on the one origin.
  const prefix = "/bench/worker/";
  const entries = scaleFixture({ keys: 0, pools: 20, origin: () => origin.url });
  const map = compile(
    { revision: 1, entries: entries.map((e) => ({ key: prefix + e.rel, value: e.value })) },
    { prefix, floorPool: "p000", originTemplate: origin.url, now: new Date() },
  ).map;
  const writer = await createLocalSink({ persistDir, namespaceId: NAMESPACE });
  await writer.putMany([{ key: "routes", value: serializeMap(map) }]);
  await writer.close();

  const workerd = await startBenchWorkerd({
    persistDir,
    namespaceId: NAMESPACE,
    passOrigin: origin.url,
    vars: {},
    cleanup: o.cleanup,
  });

  const run = async (host: string, seconds: number) =>
    autocannon({
      url: `${workerd.url}/video/segment-1.ts?q=1`,
      connections: o.connections,
      duration: seconds,
      headers: { host },
    });

  // Sanity: both answer 200 through their own Worker.
  for (const host of [EDGE_HOST, PASS_HOST]) {
    const res = await httpGet(`${workerd.url}/check`, host);
    if (res.status !== 200) throw new Error(`${host} answered ${res.status}: ${res.body}`);
    if (host === EDGE_HOST && !res.headers["x-edge-pool"]) {
      throw new Error("the routing Worker did not route (no X-Edge-Pool)");
    }
    if (host === PASS_HOST && res.headers["x-edge-pool"]) {
      throw new Error("the pass-through Worker answered with routing headers");
    }
  }
  await run(EDGE_HOST, 2);
  await run(PASS_HOST, 2);

  const ratios: number[] = [];
  const edge: number[] = [];
  const pass: number[] = [];
  const edgeP99: number[] = [];
  const passP99: number[] = [];
  const cpu = { edge: 0, pass: 0, edgeReqs: 0, passReqs: 0 };
  let errors = 0;
  // Twice the rounds at half the length: the same load time, more pairs to even out a neighbour.
  const pairs = o.rounds * 2;
  const seconds = Math.max(2, Math.round(o.seconds / 2));
  const measured = async (host: string) => {
    const before = workerd.cpuSeconds();
    const r = await run(host, seconds);
    const used = workerd.cpuSeconds() - before;
    if (host === EDGE_HOST) {
      cpu.edge += used;
      cpu.edgeReqs += r.requests.total;
    } else {
      cpu.pass += used;
      cpu.passReqs += r.requests.total;
    }
    return r;
  };
  // ABBA: the side that runs first alternates, so neither always follows a warm-up or a drift.
  for (let i = 0; i < pairs; i++) {
    const [a, b] =
      i % 2 === 0
        ? [await measured(EDGE_HOST), await measured(PASS_HOST)]
        : await measured(PASS_HOST).then(async (p) => [await measured(EDGE_HOST), p] as const);
    errors += a.errors + a.timeouts + a.non2xx + b.errors + b.timeouts + b.non2xx;
    ratios.push(a.requests.average / b.requests.average);
    edge.push(a.requests.average);
    pass.push(b.requests.average);
    edgeP99.push(a.latency.p99);
    passP99.push(b.latency.p99);
    o.log(
      `  round ${i + 1}/${pairs}: routing ${a.requests.average.toFixed(0)} req/s (p99 ${a.latency.p99} ms), pass-through ${b.requests.average.toFixed(0)} req/s (p99 ${b.latency.p99} ms)`,
    );
  }
  const sum = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
  const ratio = sum(edge) / sum(pass);
  const edgeCpuUs = (cpu.edge * 1e6) / cpu.edgeReqs;
  const passCpuUs = (cpu.pass * 1e6) / cpu.passReqs;
  o.log(
    `  routing/pass-through ${ratio.toFixed(3)} (pairs ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}); workerd CPU ${edgeCpuUs.toFixed(0)} vs ${passCpuUs.toFixed(0)} µs per request`,
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
    rps: round(summarize(edge).p50, 0),
    baseline_rps: round(summarize(pass).p50, 0),
    ratio: round(ratio, 3),
    ratio_round_p50: round(summarize(ratios).p50, 3),
    ratio_round_min: round(Math.min(...ratios), 3),
    ratio_round_max: round(Math.max(...ratios), 3),
    workerd_cpu_us_per_req: round(edgeCpuUs, 0),
    baseline_workerd_cpu_us_per_req: round(passCpuUs, 0),
    p99_ms: round(summarize(edgeP99).p50, 1),
    baseline_p99_ms: round(summarize(passP99).p50, 1),
    rounds: pairs,
    round_seconds: seconds,
    connections: o.connections,
    errors,
    workerd_rss_mb: round(rss, 1),
  };
}
