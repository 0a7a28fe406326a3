import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { ObservationsBody } from "../../core/index.js";
import { serializeMap } from "../../core/index.js";
import { buildMap } from "../../testkit/map-builder.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { startOrigins } from "../../testkit/origins.js";
import { bundleWorker, compatibilityDate } from "../../testkit/worker.js";
import type { Cleanup } from "../lib/cleanup.js";
import { httpGet } from "../lib/http-get.js";
import { startOriginProcess } from "../lib/origin-process.js";
import { PLAYER_CMCD } from "../lib/player-cmcd.js";
import {
  pairedDifference,
  SLICE,
  sideCpuUs,
  sliceCycles,
  slicedLoad,
  tallyOf,
} from "../lib/sliced-load.js";
import { percentile, round } from "../lib/stats.js";
import { seedLocalRoutes, workerBenchMap } from "../lib/worker-map.js";
import { EDGE_HOST, OBSERVED_HOST, startBenchWorkerd } from "../lib/workerd.js";
import { recordingCost } from "./recording-cost.js";
import { type SlowCountryShedResult, slowCountryToShed } from "./slow-country-shed.js";

/** What the `observe` section measures (bench/README.md, `observe.*`). */
export interface ObserveResult {
  /**
   * workerd CPU per recorded request, recording on minus off, paired rounds of the loop Worker
   * (bench/workers/recording-loop.ts): median. The goal's figure.
   */
  readonly cpu_us_per_req: number;
  readonly cpu_us_per_req_ci95: readonly [number, number];
  /** The loop's own CPU per iteration with recording off, µs. */
  readonly loop_off_us?: number;
  /**
   * workerd CPU per whole request, recording on minus off, paired windows of one load through
   * the routing Worker: median and 95 % interval (whole requests cost ~700 µs, so this only
   * bounds the goal's figure from afar).
   */
  readonly e2e_cpu_us_per_req?: number;
  readonly e2e_cpu_us_per_req_ci95?: readonly [number, number];
  readonly cpu_us_on: number;
  readonly cpu_us_off: number;
  /** |recorded − sent| / sent over the known requests of the accuracy run. */
  readonly count_error: number;
  readonly sent: number;
  readonly recorded: number;
  /** Largest |edge p90 − client p90| / client p90 over the (country, pool) pairs. */
  readonly p90_error: number;
  readonly p90_pairs: readonly {
    readonly pair: string;
    readonly client_ms: number;
    readonly edge_ms: number | null;
  }[];
  /** BR's origin turning slow → BR's routes in KV shedding by viewers (default observer). */
  readonly slow_country?: SlowCountryShedResult;
}

export interface ObserveOptions {
  readonly rounds: number;
  readonly seconds: number;
  readonly connections: number;
  /** Requests of the accuracy run. */
  readonly requests: number;
  /** Rounds and iterations of the recording loop. */
  readonly loop: { readonly rounds: number; readonly iterations: number };
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const NAMESPACE = "bench-observe";
const OBSERVE_TOKEN = "bench-observe-token";
const DEBUG_TOKEN = "bench-debug-token";
const COUNTRIES = ["BR", "DE", "JP", "US"] as const;

/**
 * Recording's cost and accuracy (docs/reference.md §12): the routing Worker with the aggregator
 * bound against the same Worker without it, paired slices of one run in one workerd; then a run
 * of known requests (countries by the debug override, origins answering after 5–400 ms) whose
 * recorded counts and p90 are set beside the client's own.
 */
export async function observeCost(o: ObserveOptions): Promise<ObserveResult> {
  const persistDir = mkdtempSync(join(tmpdir(), "edge-bench-observe-"));
  o.cleanup.add("observe persist dir", () => rmSync(persistDir, { recursive: true, force: true }));
  const origin = await startOriginProcess(o.cleanup);
  await seedLocalRoutes(persistDir, NAMESPACE, workerBenchMap("/bench/observe/", origin.url));
  const workerd = await startBenchWorkerd({
    persistDir,
    namespaceId: NAMESPACE,
    passOrigin: origin.url,
    vars: {},
    recording: false,
    observedVars: { OBSERVE_TOKEN },
    cleanup: o.cleanup,
  });
  for (const host of [EDGE_HOST, OBSERVED_HOST]) {
    const res = await httpGet(`${workerd.url}/check`, host);
    if (res.status !== 200 || !res.headers["x-edge-pool"])
      throw new Error(`${host} did not route (${res.status})`);
  }
  const load = await slicedLoad({
    url: `${workerd.url}/video/segment-1.ts?CMCD=${encodeURIComponent(PLAYER_CMCD)}`,
    connections: o.connections,
    sides: [
      { name: "on", headers: { host: OBSERVED_HOST } },
      { name: "off", headers: { host: EDGE_HOST } },
    ],
    cycles: sliceCycles(o),
    sliceMs: SLICE.sliceMs,
    guardMs: SLICE.guardMs,
    warmupMs: SLICE.warmupMs,
    cpuSeconds: workerd.cpuSeconds,
  });
  const on = tallyOf(load, "on");
  const off = tallyOf(load, "off");
  const cpu = pairedDifference(on, off);
  o.log(
    `  recording on − off: ${cpu.p50.toFixed(1)} µs CPU per request (CI ${cpu.ci95.map((x) => x.toFixed(1)).join("–")}); ${sideCpuUs(on).toFixed(0)} vs ${sideCpuUs(off).toFixed(0)} µs`,
  );
  const loop = await recordingCost({ ...o.loop, cleanup: o.cleanup });
  o.log(
    `  recording loop, on − off: ${loop.p50.toFixed(2)} µs CPU per request (CI ${loop.ci95.map((x) => x.toFixed(2)).join("–")}); loop ${loop.off_us.toFixed(2)} µs off`,
  );
  const accuracy = await countAccuracy(o);
  const slowCountry = await slowCountryToShed(o);
  return {
    cpu_us_per_req: round(loop.p50, 2),
    cpu_us_per_req_ci95: [round(loop.ci95[0], 2), round(loop.ci95[1], 2)],
    loop_off_us: round(loop.off_us, 2),
    e2e_cpu_us_per_req: round(cpu.p50, 1),
    e2e_cpu_us_per_req_ci95: [round(cpu.ci95[0], 1), round(cpu.ci95[1], 1)],
    cpu_us_on: round(sideCpuUs(on), 0),
    cpu_us_off: round(sideCpuUs(off), 0),
    ...accuracy,
    slow_country: slowCountry,
  };
}

/** The accuracy run: known requests through a recording Worker, read back from its endpoint. */
async function countAccuracy(
  o: ObserveOptions,
): Promise<Pick<ObserveResult, "count_error" | "sent" | "recorded" | "p90_error" | "p90_pairs">> {
  const origins = await startOrigins(["fra-1", "gru-1"]);
  o.cleanup.add("observe origins", () => origins.close());
  // A spread of times to headers: uniform 5–400 ms from a fixed sequence.
  for (const og of origins.all) {
    let i = 0;
    og.respond(() => ({ status: 200, body: "segment", delayMs: 5 + ((i++ * 7919) % 396) }));
  }
  const [script, date] = await Promise.all([bundleWorker(), compatibilityDate()]);
  const mf = newMiniflare({
    name: "edge",
    modules: true,
    script,
    compatibilityDate: date,
    bindings: { OBSERVE_TOKEN, DEBUG_TOKEN, OBSERVE_FLUSH_SECONDS: "1" },
    kvNamespaces: { ROUTING: "routing" },
    durableObjects: { OBSERVATIONS: { className: "ObservationAggregator", useSQLite: true } },
    cf: false,
  });
  o.cleanup.add("observe workerd", () => mf.dispose());
  const kv = await mf.getKVNamespace("ROUTING");
  const map = buildMap(
    {
      default: { chain: ["fra-1"], source: "country/_default" },
      countries: { BR: { chain: ["gru-1"], source: "country/BR" } },
    },
    { rev: 1, originOf: (p) => origins.get(p).url },
  );
  await kv.put("routes", serializeMap(map));
  const times = new Map<string, number[]>();
  const get = async (country: string, count: boolean): Promise<void> => {
    const started = performance.now();
    const res = await mf.dispatchFetch(`http://edge.bench/seg.ts`, {
      headers: { "X-Edge-Debug-Token": DEBUG_TOKEN, "X-Edge-Debug-Country": country },
    });
    await res.text();
    const pool = res.headers.get("x-edge-pool");
    if (res.status !== 200 || pool === null) throw new Error(`accuracy run: ${res.status}`);
    if (count) {
      const key = `${country}/${pool}`;
      times.set(key, [...(times.get(key) ?? []), performance.now() - started]);
    }
  };
  const read = async (): Promise<ObservationsBody> => {
    const res = await mf.dispatchFetch("http://edge.bench/__edge/observations?window=900", {
      headers: { Authorization: `Bearer ${OBSERVE_TOKEN}` },
    });
    if (res.status !== 200) throw new Error(`observations answered ${res.status}`);
    return (await res.json()) as ObservationsBody;
  };
  const total = (b: ObservationsBody) => b.rows.reduce((a, r) => a + r.requests, 0);

  for (const cc of COUNTRIES) await get(cc, false);
  await sleep(1_200);
  await get("DE", false);
  await sleep(500);
  const before = total(await read());
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < o.requests; i = next++) await get(COUNTRIES[i % 4] ?? "DE", true);
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  // the isolate flushes on the first request after OBSERVE_FLUSH_SECONDS: this one, counted
  await sleep(1_200);
  await get("DE", true);
  const sent = o.requests + 1;
  let after = await read();
  for (let tries = 0; tries < 50 && total(after) - before < sent; tries++) {
    await sleep(100);
    after = await read();
  }
  const recorded = total(after) - before;
  const pairs = [...times].map(([pair, ms]) => {
    const sorted = [...ms].sort((a, b) => a - b);
    const [country, pool] = pair.split("/");
    const row = after.rows.find((r) => r.country === country && r.pool === pool);
    return {
      pair,
      client_ms: round(percentile(sorted, 90), 1),
      edge_ms: row?.ttfb_ms.p90 ?? null,
    };
  });
  const p90Error = Math.max(
    ...pairs.map((p) => (p.edge_ms === null ? 1 : Math.abs(p.edge_ms - p.client_ms) / p.client_ms)),
  );
  o.log(
    `  accuracy: ${recorded} of ${sent} requests recorded; p90 client vs edge ${pairs.map((p) => `${p.pair} ${p.client_ms}/${p.edge_ms}`).join(", ")}`,
  );
  return {
    count_error: round(Math.abs(recorded - sent) / sent, 4),
    sent,
    recorded,
    p90_error: round(p90Error, 3),
    p90_pairs: pairs,
  };
}
