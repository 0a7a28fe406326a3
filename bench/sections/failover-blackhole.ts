import { setTimeout as sleep } from "node:timers/promises";
import type { Miniflare } from "miniflare";
import { serializeMap } from "../../core/index.js";
import { buildMap } from "../../testkit/map-builder.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { startBlackhole, startOrigins } from "../../testkit/origins.js";
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

/** One sequential client's run against a black-holed primary. */
export interface StallClientResult {
  readonly requests: number;
  /** Requests that took longer than `stall_ms`. */
  readonly stalled: number;
  readonly stalled_share: number;
  /** The slowest request, ms. */
  readonly worst_ms: number;
  /** Requests that waited for a hedge (at least `ORIGIN_HEDGE_MS`). */
  readonly hedged: number;
  /** Connections the black-holed origin accepted: hedged viewers' attempts and out-of-band probes. */
  readonly hole_connections: number;
  /** Of them, the edge's probes (the connections no viewer waited for). */
  readonly probes: number;
  /** Requests the healthy pool served: one per viewer request means hedging sent it nothing extra. */
  readonly fallback_requests: number;
}

/** `failover_ms.blackhole_stall` in results.json (its `paced.stalled_share` is `blackhole_stalled_share`). */
export interface BlackholeStallResult {
  /**
   * The judged client: one request every `paced_every_ms` (a player fetching segments), at least
   * 60 requests, with the Worker's defaults.
   */
  readonly paced: StallClientResult & {
    readonly every_ms: number;
    /** p50 of the same request routed straight to the healthy pool, one after each paced request. */
    readonly fallback_p50_ms: number;
    /** `worst_ms` − `fallback_p50_ms`; the goal is ≤ `ORIGIN_HEDGE_MS` + 100 ms. */
    readonly worst_over_fallback_ms: number;
  };
  /** A back-to-back client (no pause) for `seconds`: no goal. */
  readonly back_to_back: StallClientResult & { readonly seconds: number };
  readonly stall_ms: number;
  /** The Worker's settings: the defaults of wrangler.toml. */
  readonly origin_timeout_ms: number;
  readonly hedge_ms: number;
  readonly eject_after: number;
  readonly eject_seconds: number;
}

/** Options of {@link blackholeStall}. */
export interface BlackholeStallOptions {
  /** How long the back-to-back client runs. */
  readonly seconds: number;
  /** Requests of the paced client (at least 60). */
  readonly pacedRequests: number;
  readonly cleanup: Cleanup;
  readonly log: (line: string) => void;
}

const STALL_MS = 1_000;
const PACED_EVERY_MS = 1_000;
/** wrangler.toml's defaults, which the figure is about. */
const DEFAULTS = {
  originTimeoutMs: 4_000,
  hedgeMs: 1_000,
  ejectAfter: 2,
  ejectSeconds: 10,
} as const;

/** What one client saw; `direct` holds the paired requests straight to the healthy pool. */
interface ClientRun {
  readonly times: number[];
  readonly direct: number[];
  readonly holeConnections: number;
  readonly fallbackRequests: number;
}

function clientResult(run: ClientRun): StallClientResult {
  const stalled = run.times.filter((t) => t > STALL_MS).length;
  const hedged = run.times.filter((t) => t >= DEFAULTS.hedgeMs).length;
  return {
    requests: run.times.length,
    stalled,
    stalled_share: round(stalled / Math.max(1, run.times.length), 4),
    worst_ms: round(Math.max(0, ...run.times)),
    hedged,
    hole_connections: run.holeConnections,
    probes: Math.max(0, run.holeConnections - hedged),
    fallback_requests: run.fallbackRequests,
  };
}

/**
 * Sequential clients (one request at a time, as a player fetches segments) while the route's
 * first pool accepts connections and never answers, with the Worker's default
 * `ORIGIN_TIMEOUT_MS`, `ORIGIN_HEDGE_MS`, `EDGE_EJECT_AFTER` and `EDGE_EJECT_SECONDS`: the share
 * of requests over 1 s and the worst one. The judged client is paced at one request a second,
 * each followed by the same request routed straight to the healthy pool (the fallback's own
 * time); a back-to-back one runs for `seconds`. Each runs in a fresh workerd, so each starts
 * with nothing ejected; each counts what the black hole and the healthy pool received.
 */
export async function blackholeStall(o: BlackholeStallOptions): Promise<BlackholeStallResult> {
  const [script, date] = await Promise.all([bundleWorker(), compatibilityDate()]);

  const client = async (everyMs: number, stop: (n: number) => boolean): Promise<ClientRun> => {
    const [hole, good] = await Promise.all([startBlackhole(), startOrigins(["good"])]);
    const closeOrigins = o.cleanup.add("blackhole and fallback (stall)", async () => {
      await Promise.all([hole.close(), good.close()]);
    });
    const urls: Record<string, string> = { hole: hole.url, good: good.get("good").url };
    const map = serializeMap(
      buildMap(
        {
          default: { chain: ["hole", "good"], source: "country/_default" },
          countries: { DE: { chain: ["good"], source: "country/DE" } },
        },
        { rev: 1, originOf: (p) => urls[p] ?? "" },
      ),
    );
    const mf = routingWorkerd(script, date, {
      ORIGIN_TIMEOUT_MS: String(DEFAULTS.originTimeoutMs),
      ORIGIN_HEDGE_MS: String(DEFAULTS.hedgeMs),
      EDGE_EJECT_AFTER: String(DEFAULTS.ejectAfter),
      EDGE_EJECT_SECONDS: String(DEFAULTS.ejectSeconds),
      DEBUG_TOKEN: TOKEN,
    });
    const dispose = o.cleanup.add("workerd (stall)", () => mf.dispose());
    try {
      const origin = (await mf.ready).origin;
      const url = `${origin}/video/segment.ts`;
      await (await mf.getKVNamespace("ROUTING")).put("routes", map);
      // the isolate reads its map once before the clock starts
      await timedGet(`${origin}/__edge/health`, HOST);
      const direct = { "X-Edge-Debug-Token": TOKEN, "X-Edge-Debug-Country": "DE" };
      const times: number[] = [];
      const paired: number[] = [];
      good.get("good").reset();
      while (!stop(times.length)) {
        const started = performance.now();
        const res = await timedGet(url, HOST);
        if (res.status !== 200)
          throw new Error(`stall: request ${times.length} answered ${res.status}`);
        times.push(res.ms);
        if (res.ms > STALL_MS)
          o.log(`  stall: request ${times.length} took ${res.ms.toFixed(0)} ms`);
        if (everyMs > 0) {
          paired.push((await timedGet(url, HOST, direct)).ms);
          const wait = everyMs - (performance.now() - started);
          if (wait > 0) await sleep(wait);
        }
      }
      const viewers = good.get("good").requests.length - paired.length;
      return {
        times,
        direct: paired,
        holeConnections: hole.accepted,
        fallbackRequests: viewers,
      };
    } finally {
      await dispose();
      await closeOrigins();
    }
  };

  const pacedRequests = Math.max(60, o.pacedRequests);
  const end = performance.now() + o.seconds * 1000;
  const tight = clientResult(await client(0, () => performance.now() >= end));
  const pacedRun = await client(PACED_EVERY_MS, (n) => n >= pacedRequests);
  const paced = clientResult(pacedRun);
  const fallbackP50 = summarize(pacedRun.direct).p50;
  o.log(
    `  stall: every ${PACED_EVERY_MS} ms ${paced.stalled}/${paced.requests} over ${STALL_MS} ms (worst ${paced.worst_ms} ms, ${paced.hedged} hedged, ${paced.probes} probes); back to back ${tight.stalled}/${tight.requests}`,
  );
  return {
    paced: {
      ...paced,
      every_ms: PACED_EVERY_MS,
      fallback_p50_ms: round(fallbackP50, 2),
      worst_over_fallback_ms: round(paced.worst_ms - fallbackP50),
    },
    back_to_back: { ...tight, seconds: o.seconds },
    stall_ms: STALL_MS,
    origin_timeout_ms: DEFAULTS.originTimeoutMs,
    hedge_ms: DEFAULTS.hedgeMs,
    eject_after: DEFAULTS.ejectAfter,
    eject_seconds: DEFAULTS.ejectSeconds,
  };
}
