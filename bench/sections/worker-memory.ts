import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";
import { localPersistRoot } from "../../adapters/kv/kv-settings.js";
import { type IsolateHeap, openIsolateHeap } from "../../soak/isolate-heap.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { freePort } from "../../testkit/ports.js";
import { bundleWorker, compatibilityDate } from "../../testkit/worker.js";
import type { Cleanup } from "../lib/cleanup.js";
import { httpGet } from "../lib/http-get.js";
import { startOriginProcess } from "../lib/origin-process.js";
import { childPids, commName } from "../lib/proc.js";
import { round } from "../lib/stats.js";
import { seedLocalRoutes, workerBenchMap } from "../lib/worker-map.js";
import { bundlePassthrough, EDGE_HOST, edgeWorker, PASS_HOST, passWorker } from "../lib/workerd.js";

/** One side's load phase: what workerd and the side's isolate held after it. */
export interface WorkerMemoryPhase {
  readonly side: "routing" | "pass";
  readonly requests: number;
  /** workerd's resident set after the phase, MiB (`VmRSS`), and its anonymous part. */
  readonly rss_mb: number;
  readonly anon_mb: number;
  /** The side's isolate heap right after a full collection, MiB (null: no answer). */
  readonly heap_mb: number | null;
}

/** `worker.memory` in results.json. */
export interface WorkerMemoryResult {
  /** workerd's RSS before any load (both Workers warm, a few requests each), MiB. */
  readonly rss_mb_start: number;
  /** The phases in order: pass, routing, pass, routing… (same workerd, same load). */
  readonly phases: readonly WorkerMemoryPhase[];
  /**
   * workerd RSS growth per 1,000 requests over each side's last phase (KiB): what a side's
   * requests still leave resident once workerd's own memory has grown to the load (its first
   * phases raise the RSS by hundreds of MiB whichever Worker serves them).
   */
  readonly rss_kib_per_1k_routing: number;
  readonly rss_kib_per_1k_pass: number;
  /** The routing and pass-through isolates' heaps after the last phase, MiB. */
  readonly heap_mb_routing: number | null;
  readonly heap_mb_pass: number | null;
  /** workerd RSS after every phase, MiB: the figure beside `workerd_rss_mb`. */
  readonly rss_mb_end: number;
  readonly requests_per_phase: number;
  readonly connections: number;
}

/** Load plan of the memory measurement. */
export interface WorkerMemoryOptions {
  /** Requests per phase (each side gets `pairs` phases). */
  readonly requests: number;
  readonly pairs: number;
  readonly connections: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const NAMESPACE = "bench-worker-memory";

function statusKib(pid: number, field: string): number {
  try {
    const text = readFileSync(`/proc/${pid}/status`, "utf8");
    return Number(new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(text)?.[1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
}

/** Requests `host` about every 20 ms until stopped: workerd answers the inspector's GC only then. */
function trickle(url: string, host: string): { stop(): Promise<void> } {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await httpGet(url, host).catch(() => undefined);
      await sleep(20);
    }
  })();
  return {
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

async function heapOf(heap: IsolateHeap, url: string, host: string): Promise<number | null> {
  const t = trickle(url, host);
  try {
    return await heap.usedAfterGcMiB();
  } finally {
    await t.stop();
  }
}

/**
 * The routing Worker and the pass-through Worker in one workerd, under the same closed-loop load
 * in turn (pass, routing, pass, routing…, `requests` each): workerd's RSS after each phase and
 * each isolate's heap after a full collection (over the inspector, as the soak reads it). A side
 * whose phases keep raising the RSS while the other's do not holds memory per request.
 */
export async function workerMemory(o: WorkerMemoryOptions): Promise<WorkerMemoryResult> {
  const persistDir = mkdtempSync(join(tmpdir(), "edge-bench-worker-memory-"));
  o.cleanup.add("worker memory persist dir", () =>
    rmSync(persistDir, { recursive: true, force: true }),
  );
  const origin = await startOriginProcess(o.cleanup);
  await seedLocalRoutes(persistDir, NAMESPACE, workerBenchMap("/bench/memory/", origin.url));
  const [edgeScript, passScript, date] = await Promise.all([
    bundleWorker(),
    bundlePassthrough(),
    compatibilityDate(),
  ]);
  const inspectorPort = await freePort();
  const before = new Set(childPids(process.pid));
  const mf = newMiniflare({
    host: "127.0.0.1",
    port: 0,
    inspectorPort,
    resourcePersistencePath: localPersistRoot(persistDir),
    cf: false,
    workers: [
      { ...edgeWorker(edgeScript, date, EDGE_HOST), kvNamespaces: { ROUTING: NAMESPACE } },
      passWorker(passScript, date, PASS_HOST, origin.url),
    ],
  });
  o.cleanup.add("worker memory workerd", () => mf.dispose());
  const base = (await mf.ready).origin;
  const url = `${base}/video/segment-1.ts?q=1`;
  const workerd = childPids(process.pid).find(
    (p) => !before.has(p) && commName(p).startsWith("workerd"),
  );
  if (workerd === undefined) throw new Error("no workerd child for the memory measurement");
  const heaps = {
    routing: await openIsolateHeap(inspectorPort, "edge"),
    pass: await openIsolateHeap(inspectorPort, "pass"),
  };
  o.cleanup.add("isolate inspectors", () => {
    heaps.routing.close();
    heaps.pass.close();
  });
  const hostOf = { routing: EDGE_HOST, pass: PASS_HOST } as const;
  for (const [side, host] of Object.entries(hostOf)) {
    const res = await httpGet(url, host);
    if (res.status !== 200) throw new Error(`${host} answered ${res.status}: ${res.body}`);
    if ((side === "routing") !== (res.headers["x-edge-pool"] !== undefined))
      throw new Error(
        `${host} is not the ${side} Worker (X-Edge-Pool: ${res.headers["x-edge-pool"]})`,
      );
  }
  await heapOf(heaps.routing, url, EDGE_HOST);
  await heapOf(heaps.pass, url, PASS_HOST);
  const rssStart = statusKib(workerd, "VmRSS") / 1024;
  const phases: WorkerMemoryPhase[] = [];
  for (let i = 0; i < o.pairs * 2; i++) {
    const side = i % 2 === 0 ? "pass" : "routing";
    const result = await autocannon({
      url,
      connections: o.connections,
      amount: o.requests,
      headers: { host: hostOf[side] },
    });
    if (result.non2xx > 0 || result.errors > 0)
      throw new Error(`${side}: ${result.non2xx} non-2xx, ${result.errors} errors under load`);
    const heap = await heapOf(heaps[side], url, hostOf[side]);
    const phase: WorkerMemoryPhase = {
      side,
      requests: result.requests.total,
      rss_mb: round(statusKib(workerd, "VmRSS") / 1024),
      anon_mb: round(statusKib(workerd, "RssAnon") / 1024),
      heap_mb: heap === null ? null : round(heap, 2),
    };
    phases.push(phase);
    o.log(
      `  memory ${side}: ${phase.requests} requests → workerd RSS ${phase.rss_mb} MiB (anon ${phase.anon_mb}), isolate heap ${phase.heap_mb ?? "?"} MiB`,
    );
  }
  /** RSS growth over the side's last phase, per 1,000 requests (KiB). */
  const perThousand = (side: "routing" | "pass"): number => {
    const i = phases.findLastIndex((p) => p.side === side);
    const p = phases[i];
    const prev = phases[i - 1];
    if (!p || !prev) return Number.NaN;
    return round(((p.rss_mb - prev.rss_mb) * 1024 * 1000) / p.requests);
  };
  const last = (side: "routing" | "pass") =>
    [...phases].reverse().find((p) => p.side === side)?.heap_mb ?? null;
  return {
    rss_mb_start: round(rssStart),
    phases,
    rss_kib_per_1k_routing: perThousand("routing"),
    rss_kib_per_1k_pass: perThousand("pass"),
    heap_mb_routing: last("routing"),
    heap_mb_pass: last("pass"),
    rss_mb_end: phases.at(-1)?.rss_mb ?? round(rssStart),
    requests_per_phase: o.requests,
    connections: o.connections,
  };
}
