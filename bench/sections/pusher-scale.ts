import { setTimeout as sleep } from "node:timers/promises";
import { readPrefix } from "../../adapters/prefix-read.js";
import {
  COUNTRY_CODES,
  compile,
  DEFAULT_ORIGIN_TEMPLATE,
  type Snapshot,
  serializeMap,
} from "../../core/index.js";
import { Cleanup } from "../lib/cleanup.js";
import { deployedEnvironment } from "../lib/deployed-environment.js";
import { countryRule, scaleFixture } from "../lib/fixture.js";
import { librariesRssMb } from "../lib/libraries-rss.js";
import { metricsCounter } from "../lib/metrics-counter.js";
import { rssMb } from "../lib/proc.js";
import { processCpuSeconds } from "../lib/process-cpu.js";
import { benchPusherEnvironment, workerdChildrenRssMb } from "../lib/pusher-process.js";
import { type Stack, type StackSink, startStack } from "../lib/stack.js";
import { maxInWindow, round, summarize } from "../lib/stats.js";

/** One pusher under the sustained load, on one KV sink. */
export interface SustainedResult {
  readonly sink: StackSink;
  /** The pusher's Node process: after the first push, and at the end of the sustained load. */
  readonly rss_mb_start: number;
  readonly rss_mb: number;
  readonly rss_mb_peak: number;
  /**
   * 5 s after KV settled. The idle heap trim (adapters/idle-heap-trim.ts) has run by then unless
   * its 1 % time share still held it back.
   */
  readonly rss_mb_rest: number;
  /** The local sink's workerd (a stand-in for Cloudflare; not part of a production pusher). */
  readonly sink_workerd_rss_mb: number;
  readonly sustained_rate_per_s: number;
  readonly sustained_seconds: number;
  readonly changes: number;
  readonly kv_writes: number;
  readonly max_writes_per_s_per_key: number;
  /** After the last change: until KV holds it. */
  readonly final_settle_ms: number;
  /** Pusher CPU during the sustained load, % of one core (from /proc/PID/stat). */
  readonly cpu_pct: number;
  /** Full prefix reads (`edge_pusher_range_reads_total`) per `routes` write during the load. */
  readonly reads_per_write: number | null;
  /** Range reads the pusher made during the load. */
  readonly range_reads: number | null;
}

/**
 * `pusher_scale` in results.json. The top-level RSS/write figures are the production pusher's
 * (`KV_SINK=cloudflare` against the local REST stand-in: no Miniflare in the process);
 * `local_sink` repeats the sustained load with `KV_SINK=local` (Miniflare in-process + workerd).
 */
export interface PusherScaleResult extends SustainedResult {
  readonly keys: number;
  readonly pools: number;
  readonly countries: number;
  readonly compile_ms_10k: number;
  readonly compile_ms_max: number;
  readonly range_read_ms: number;
  readonly range_read_ms_max: number;
  readonly map_bytes: number;
  readonly problems: number;
  readonly local_sink: SustainedResult | null;
  /**
   * Floor, same run: RSS of a Node process with the same NODE_OPTIONS that only loads the
   * pusher's run-time packages (etcd3/gRPC, prom-client, zod, pino, cockatiel and the built
   * Cloudflare KV sink) and holds no data; what any pusher on this Node pays before its first key.
   */
  readonly libraries_rss_mb: number | null;
  /** The pusher's NODE_OPTIONS: the systemd unit's, unless BENCH_PUSHER_NODE_OPTIONS is set. */
  readonly node_options: string | null;
  /** What ran: the built bundle (`bin/edge-pusher.js` → `dist/`), unless BENCH_PUSHER_ENTRY. */
  readonly entry: string;
}

/** Sustained-load plan. */
export interface PusherScaleOptions {
  readonly sustainSeconds: number;
  readonly rate: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const KEYS = 10_000;

const POOLS = 200;

/** 10,000 keys: compile and range-read cost, then the pusher under 100 changes/s on each sink. */
export async function pusherScale(o: PusherScaleOptions): Promise<PusherScaleResult> {
  const fixture = scaleFixture({ keys: KEYS, pools: POOLS });
  // Each sink gets its own etcd and pusher, torn down before the next one is measured.
  const first = new Cleanup();
  const dropFirst = o.cleanup.add("scale (cloudflare sink)", () => first.runAll());
  // As deployed: the systemd unit's variables (heap bounds, malloc) apply to both runs.
  const deployed = deployedEnvironment();
  const stack = await startStack(first, fixture, { sink: "cloudflare", deployed });
  const { client, prefix } = stack;

  const reads: number[] = [];
  let snapshot: Snapshot = await readPrefix(client, prefix);
  for (let i = 0; i < 15; i++) {
    const t0 = performance.now();
    snapshot = await readPrefix(client, prefix);
    reads.push(performance.now() - t0);
  }
  if (snapshot.entries.length !== KEYS) {
    throw new Error(`expected ${KEYS} keys, read ${snapshot.entries.length}`);
  }
  const opts = {
    carried: null,
    prefix,
    floorPool: "p000",
    originTemplate: DEFAULT_ORIGIN_TEMPLATE,
  };
  let previous = compile(snapshot, { ...opts, now: new Date() }).map;
  const compiles: number[] = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    previous = compile(snapshot, { ...opts, now: new Date(), carried: previous }).map;
    compiles.push(performance.now() - t0);
  }
  const mapText = serializeMap(previous);
  const c = summarize(compiles);
  const r = summarize(reads);
  o.log(
    `  ${KEYS} keys: compile p50 ${c.p50.toFixed(1)} ms (max ${c.max.toFixed(1)}), range read p50 ${r.p50.toFixed(1)} ms, map ${mapText.length} bytes`,
  );
  const keys = snapshot.entries.length;
  snapshot = { revision: 0, entries: [] };

  const production = await sustain(stack, o);
  await dropFirst();
  const librariesRss = await librariesRssMb(deployed);
  o.log(`  floor: node with the pusher's packages loaded, no data: ${librariesRss ?? "?"} MiB RSS`);

  let local: SustainedResult | null = null;
  // BENCH_SCALE_LOCAL=0 skips the local-sink run (quicker memory experiments).
  if (process.env.BENCH_SCALE_LOCAL !== "0")
    try {
      const stackLocal = await startStack(o.cleanup, fixture, { sink: "local", deployed });
      local = await sustain(stackLocal, o);
    } catch (e) {
      o.log(`  local sink run failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  return {
    keys,
    pools: POOLS,
    countries: Object.keys(previous.countries).length,
    compile_ms_10k: round(c.p50),
    compile_ms_max: round(c.max),
    range_read_ms: round(r.p50),
    range_read_ms_max: round(r.max),
    map_bytes: mapText.length,
    problems: previous.problems.length,
    ...production,
    local_sink: local,
    libraries_rss_mb: librariesRss,
    node_options: benchPusherEnvironment(deployed, process.env).NODE_OPTIONS ?? null,
    entry: process.env.BENCH_PUSHER_ENTRY || "dist/edge-pusher.js (built)",
  };
}

/** Drives `rate` country changes per second for `sustainSeconds` and watches the pusher. */
async function sustain(stack: Stack, o: PusherScaleOptions): Promise<SustainedResult> {
  const { client, prefix, pusher } = stack;
  await sleep(1_500);
  const rssStart = rssMb(pusher.pid);
  const countries = [...COUNTRY_CODES];
  const total = Math.round(o.rate * o.sustainSeconds);
  const interval = 1000 / o.rate;
  const startedWall = Date.now();
  const reads0 = await metricsCounter(pusher.port, "edge_pusher_range_reads_total");
  const cpu0 = processCpuSeconds(pusher.pid);
  const t0 = performance.now();
  const inflight = new Set<Promise<void>>();
  let lastRev = 0;
  let peak = rssStart;
  let nextSample = t0 + 1000;
  for (let i = 0; i < total; i++) {
    const due = t0 + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const cc = countries[i % countries.length] ?? "DE";
    const p = client
      .put(`${prefix}country/${cc}`)
      .value(countryRule(i, POOLS, 1 + Math.floor(i / countries.length)))
      .exec()
      .then((res) => {
        lastRev = Math.max(lastRev, Number(res.header.revision));
      });
    inflight.add(p);
    void p.finally(() => inflight.delete(p));
    if (performance.now() >= nextSample) {
      peak = Math.max(peak, rssMb(pusher.pid) || 0);
      nextSample += 1000;
    }
  }
  await Promise.all(inflight);
  const putsDone = performance.now();
  const cpu1 = processCpuSeconds(pusher.pid);
  const settle = await stack.waitKvRevision(lastRev, 60_000, 5);
  if (settle === null) throw new Error("KV never caught up with the sustained load");
  const elapsed = (putsDone - t0) / 1000;
  await sleep(1_500);
  const rssEnd = rssMb(pusher.pid);
  // Reads and routes writes both counted from the load's start until KV settled (and 1.5 s more).
  const reads1 = await metricsCounter(pusher.port, "edge_pusher_range_reads_total");
  const writes = pusher.routesWrites(startedWall - 5);
  const reads = reads0 === null || reads1 === null ? null : reads1 - reads0;
  const cpuPct = round(((cpu1 - cpu0) / elapsed) * 100);
  await sleep(3_500);
  const rssRest = rssMb(pusher.pid);
  o.log(
    `  ${stack.sink} sink: sustained ${total} changes in ${elapsed.toFixed(1)} s: ${writes.length} routes writes, ${reads ?? "?"} range reads, CPU ${cpuPct} %, pusher RSS ${rssStart.toFixed(0)} → ${rssEnd.toFixed(0)} MiB (peak ${Math.max(peak, rssEnd).toFixed(0)}, at rest ${rssRest.toFixed(0)})`,
  );
  return {
    sink: stack.sink,
    rss_mb_start: round(rssStart),
    rss_mb: round(rssEnd),
    rss_mb_peak: round(Math.max(peak, rssEnd)),
    rss_mb_rest: round(rssRest),
    sink_workerd_rss_mb: round(workerdChildrenRssMb(pusher.pid)),
    sustained_rate_per_s: round(total / elapsed),
    sustained_seconds: round(elapsed),
    changes: total,
    kv_writes: writes.length,
    max_writes_per_s_per_key: maxInWindow(writes.map((w) => w.startedAt)),
    final_settle_ms: round(settle),
    cpu_pct: cpuPct,
    reads_per_write: reads === null || writes.length === 0 ? null : round(reads / writes.length),
    range_reads: reads,
  };
}
