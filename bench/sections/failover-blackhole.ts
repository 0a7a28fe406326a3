import { setTimeout as sleep } from "node:timers/promises";
import type { Miniflare } from "miniflare";
import { serializeMap } from "../../core/index.js";
import { buildMap } from "../../testkit/map-builder.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { startBlackhole } from "../../testkit/origins.js";
import { bundleWorker, compatibilityDate } from "../../testkit/worker.js";
import type { Cleanup } from "../lib/cleanup.js";
import { startOriginProcess } from "../lib/origin-process.js";
import { round, summarize } from "../lib/stats.js";
import { timedGet } from "../lib/timed-get.js";
import { edgeWorker } from "../lib/workerd.js";

const HOST = "edge.failover";
const TOKEN = "bench-failover-token";

/** `failover_ms.blackhole` in results.json. */
export interface BlackholeFailoverResult {
  /** Request → answer from the next pool, when the first pool accepts and never answers. */
  readonly p50: number;
  readonly max: number;
  readonly runs: number;
  /** The same request through the same Worker to the healthy pool directly. */
  readonly floor_p50: number;
  /** `max` minus `ORIGIN_TIMEOUT_MS`; the goal is ≤ 200 ms. */
  readonly over_timeout_max: number;
}

/** Run count and the Worker's `ORIGIN_TIMEOUT_MS`. */
export interface BlackholeFailoverOptions {
  readonly runs: number;
  readonly originTimeoutMs: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

/**
 * The routing Worker alone in a workerd on a loopback port, with an in-memory `ROUTING`, two
 * attempts per request, an hour of isolate cache and `vars` on top.
 */
function routingWorkerd(script: string, date: string, vars: Record<string, string>): Miniflare {
  return newMiniflare({
    host: "127.0.0.1",
    port: 0,
    cf: false,
    workers: [
      {
        ...edgeWorker(script, date, HOST),
        kvNamespaces: ["ROUTING"],
        bindings: { MAX_ATTEMPTS: "2", ISOLATE_CACHE_SECONDS: "3600", ...vars },
      },
    ],
  });
}

/**
 * The first pool of the route accepts the connection and never answers (a hung origin, a
 * black-holed network path): time until the client has the answer of the next pool. Each run
 * is paired with a request routed to the healthy pool at once (the floor).
 */
export async function blackholeFailover(
  o: BlackholeFailoverOptions,
): Promise<BlackholeFailoverResult> {
  const [hole, origin, script, date] = await Promise.all([
    startBlackhole(),
    startOriginProcess(o.cleanup),
    bundleWorker(),
    compatibilityDate(),
  ]);
  o.cleanup.add("blackhole", () => hole.close());
  const mf = routingWorkerd(script, date, {
    ORIGIN_TIMEOUT_MS: String(o.originTimeoutMs),
    // every run must meet the silent origin: ejection would pass it over (blackholeStall)
    EDGE_EJECT_AFTER: "0",
    DEBUG_TOKEN: TOKEN,
  });
  o.cleanup.add("workerd (blackhole)", () => mf.dispose());
  const url = `${(await mf.ready).origin}/video/segment-1.ts`;
  const urls: Record<string, string> = { hole: hole.url, good: origin.url };
  const map = buildMap(
    {
      default: { chain: ["hole", "good"], source: "country/_default" },
      countries: { DE: { chain: ["good"], source: "country/DE" } },
    },
    { rev: 1, originOf: (p) => urls[p] ?? "" },
  );
  await (await mf.getKVNamespace("ROUTING")).put("routes", serializeMap(map));
  const as = (cc: string) => ({ "X-Edge-Debug-Token": TOKEN, "X-Edge-Debug-Country": cc });

  const times: number[] = [];
  const floor: number[] = [];
  for (let i = 0; i < o.runs + 1; i++) {
    const direct = await timedGet(url, HOST, as("DE"));
    const res = await timedGet(url, HOST, as("FR"));
    if (res.status !== 200 || res.headers["x-edge-failover"] !== "hole>good") {
      throw new Error(`run ${i}: ${res.status}, failover ${res.headers["x-edge-failover"]}`);
    }
    if (i === 0) continue; // warm-up: the first request also reads KV and opens connections
    floor.push(direct.ms);
    times.push(res.ms);
    o.log(`  blackhole run ${i}/${o.runs}: next pool answered after ${res.ms.toFixed(0)} ms`);
  }
  const s = summarize(times);
  return {
    p50: round(s.p50),
    max: round(s.max),
    runs: s.n,
    floor_p50: round(summarize(floor).p50, 2),
    over_timeout_max: round(s.max - o.originTimeoutMs),
  };
}

/** `failover_ms.blackhole_stall` in results.json (its `stalled_share` is `blackhole_stalled_share`). */
export interface BlackholeStallResult {
  /** Requests that took longer than `stall_ms`, over all requests of the back-to-back client. */
  readonly stalled_share: number;
  readonly requests: number;
  readonly stalled: number;
  readonly seconds: number;
  readonly stall_ms: number;
  /** The same with a client that starts one request every `paced_every_ms` (2 s segments). */
  readonly paced_stalled_share: number;
  readonly paced_requests: number;
  readonly paced_every_ms: number;
  /** The Worker's settings: the defaults of wrangler.toml. */
  readonly origin_timeout_ms: number;
  readonly eject_after: number;
  readonly eject_seconds: number;
}

/** Options of {@link blackholeStall}. */
export interface BlackholeStallOptions {
  readonly seconds: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const STALL_MS = 1_000;
const PACED_EVERY_MS = 2_000;
/** wrangler.toml's defaults, which the figure is about. */
const DEFAULTS = { originTimeoutMs: 4_000, ejectAfter: 2, ejectSeconds: 10 } as const;

/**
 * A sequential client (one request at a time, as a player fetches segments) for `seconds` while
 * the route's first pool accepts connections and never answers, with the Worker's default
 * `ORIGIN_TIMEOUT_MS`, `EDGE_EJECT_AFTER` and `EDGE_EJECT_SECONDS`: the share of requests that
 * took longer than 1 s. Once back to back, once paced at one request every 2 s (each in a
 * fresh workerd, so each starts with nothing ejected).
 */
export async function blackholeStall(o: BlackholeStallOptions): Promise<BlackholeStallResult> {
  const [hole, origin, script, date] = await Promise.all([
    startBlackhole(),
    startOriginProcess(o.cleanup),
    bundleWorker(),
    compatibilityDate(),
  ]);
  o.cleanup.add("blackhole (stall)", () => hole.close());
  const urls: Record<string, string> = { hole: hole.url, good: origin.url };
  const map = serializeMap(
    buildMap(
      { default: { chain: ["hole", "good"], source: "country/_default" }, countries: {} },
      { rev: 1, originOf: (p) => urls[p] ?? "" },
    ),
  );

  const client = async (everyMs: number): Promise<{ requests: number; stalled: number }> => {
    const mf = routingWorkerd(script, date, {
      ORIGIN_TIMEOUT_MS: String(DEFAULTS.originTimeoutMs),
      EDGE_EJECT_AFTER: String(DEFAULTS.ejectAfter),
      EDGE_EJECT_SECONDS: String(DEFAULTS.ejectSeconds),
    });
    const dispose = o.cleanup.add("workerd (stall)", () => mf.dispose());
    try {
      const url = `${(await mf.ready).origin}/video/segment.ts`;
      await (await mf.getKVNamespace("ROUTING")).put("routes", map);
      // the isolate reads its map once before the clock starts
      await timedGet(`${(await mf.ready).origin}/__edge/health`, HOST);
      let requests = 0;
      let stalled = 0;
      const end = performance.now() + o.seconds * 1000;
      while (performance.now() < end) {
        const started = performance.now();
        const res = await timedGet(url, HOST);
        if (res.status !== 200)
          throw new Error(`stall: request ${requests} answered ${res.status}`);
        requests += 1;
        if (res.ms > STALL_MS) {
          stalled += 1;
          o.log(`  stall: request ${requests} took ${res.ms.toFixed(0)} ms`);
        }
        const wait = everyMs - (performance.now() - started);
        if (wait > 0) await sleep(wait);
      }
      return { requests, stalled };
    } finally {
      await dispose();
    }
  };

  const tight = await client(0);
  const paced = await client(PACED_EVERY_MS);
  o.log(
    `  stall: back to back ${tight.stalled}/${tight.requests} over ${STALL_MS} ms; every ${PACED_EVERY_MS} ms ${paced.stalled}/${paced.requests}`,
  );
  return {
    stalled_share: round(tight.stalled / Math.max(1, tight.requests), 4),
    requests: tight.requests,
    stalled: tight.stalled,
    seconds: o.seconds,
    stall_ms: STALL_MS,
    paced_stalled_share: round(paced.stalled / Math.max(1, paced.requests), 4),
    paced_requests: paced.requests,
    paced_every_ms: PACED_EVERY_MS,
    origin_timeout_ms: DEFAULTS.originTimeoutMs,
    eject_after: DEFAULTS.ejectAfter,
    eject_seconds: DEFAULTS.ejectSeconds,
  };
}
