import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { STEER_TTL_RANGE_S } from "../../core/contract/steer-settings.js";
import type { Cleanup } from "../lib/cleanup.js";
import { httpGet } from "../lib/http-get.js";
import { startOriginProcess } from "../lib/origin-process.js";
import {
  pairedDifference,
  SLICE,
  sideCpuUs,
  sideRate,
  sliceCycles,
  slicedLoad,
  tallyOf,
} from "../lib/sliced-load.js";
import { round } from "../lib/stats.js";
import { type SteerSwitchResult, steerSwitch } from "../lib/steer-switch.js";
import { seedLocalRoutes, workerBenchMap } from "../lib/worker-map.js";
import { EDGE_HOST, startBenchWorkerd } from "../lib/workerd.js";

/** `steer` in results.json (docs/reference.md §15). */
export interface SteeringResult {
  /** The steering manifest's `TTL` by default, seconds. */
  readonly ttl_s: number;
  /** workerd CPU per steering request (`/__edge/steer/hls`), µs. */
  readonly cpu_us_per_req: number;
  /** workerd CPU per routed segment request in the same runs, µs. */
  readonly routing_cpu_us_per_req: number;
  /** Steering − routing CPU per request, paired windows: median and 95 % CI, µs. */
  readonly cpu_us_over_routing: number;
  readonly cpu_us_over_routing_ci95: readonly [number, number];
  readonly rps: number;
  readonly routing_rps: number;
  /** Real players' switch when their pool dies, and their pathway while nothing changes; null when it failed. */
  readonly switch: SteerSwitchResult | null;
}

/** Load plan, as the Worker section's. */
export interface SteeringOptions {
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
  /** How long the players' pathways are watched with nothing changing, s. */
  readonly steadyS: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const NAMESPACE = "bench-steer";
const SEGMENT = "/video/segment-1.ts?q=1";
const STEER = "/__edge/steer/hls?base=fra-1&_HLS_pathway=fra-1&_HLS_throughput=5000000";

/**
 * The steering endpoint's CPU per request next to the routing Worker's: one workerd, one map,
 * sliced load alternating a segment request (proxied to a loopback origin) and a steering
 * request (answered by the edge alone), `STEER_RATE=0` so none is refused. Then, with that
 * workerd stopped, real players under the real control plane (`steerSwitch`), at the least TTL.
 */
export async function steering(o: SteeringOptions): Promise<SteeringResult> {
  const persistDir = mkdtempSync(join(tmpdir(), "edge-bench-steer-"));
  o.cleanup.add("steer persist dir", () => rmSync(persistDir, { recursive: true, force: true }));
  const origin = await startOriginProcess(o.cleanup);
  await seedLocalRoutes(persistDir, NAMESPACE, workerBenchMap("/bench/steer/", origin.url));
  const workerd = await startBenchWorkerd({
    persistDir,
    namespaceId: NAMESPACE,
    passOrigin: origin.url,
    vars: { STEER_RATE: "0" },
    cleanup: o.cleanup,
  });
  for (const path of [SEGMENT, STEER]) {
    const res = await httpGet(`${workerd.url}${path}`, EDGE_HOST);
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${res.body}`);
  }
  const load = await slicedLoad({
    url: `${workerd.url}${SEGMENT}`,
    connections: o.connections,
    sides: [
      { name: "routing", headers: { host: EDGE_HOST } },
      { name: "steer", headers: { host: EDGE_HOST }, path: STEER },
    ],
    cycles: sliceCycles(o),
    sliceMs: SLICE.sliceMs,
    guardMs: SLICE.guardMs,
    warmupMs: SLICE.warmupMs,
    cpuSeconds: workerd.cpuSeconds,
  });
  const routing = tallyOf(load, "routing");
  const steer = tallyOf(load, "steer");
  if (steer.non2xx > 0) throw new Error(`${steer.non2xx} steering requests were not answered 200`);
  const over = pairedDifference(steer, routing);
  o.log(
    `  steering ${sideCpuUs(steer).toFixed(0)} vs routing ${sideCpuUs(routing).toFixed(0)} µs workerd CPU per request (steer − routing ${over.p50.toFixed(0)} µs, CI ${over.ci95.map((x) => x.toFixed(0)).join("–")}); ${sideRate(steer).toFixed(0)} vs ${sideRate(routing).toFixed(0)} req/s`,
  );
  await o.cleanup.runAll();
  let switched: SteerSwitchResult | null = null;
  try {
    switched = await steerSwitch({
      cleanup: o.cleanup,
      log: o.log,
      ttlS: STEER_TTL_RANGE_S.min,
      steadyS: o.steadyS,
    });
  } catch (e) {
    o.log(`  steering: the players' switch failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  return {
    switch: switched,
    ttl_s: STEER_TTL_RANGE_S.fallback,
    cpu_us_per_req: round(sideCpuUs(steer), 0),
    routing_cpu_us_per_req: round(sideCpuUs(routing), 0),
    cpu_us_over_routing: round(over.p50, 0),
    cpu_us_over_routing_ci95: [round(over.ci95[0], 0), round(over.ci95[1], 0)],
    rps: round(sideRate(steer), 0),
    routing_rps: round(sideRate(routing), 0),
  };
}
