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
  const mf = newMiniflare({
    host: "127.0.0.1",
    port: 0,
    cf: false,
    workers: [
      {
        ...edgeWorker(script, date, HOST),
        kvNamespaces: ["ROUTING"],
        bindings: {
          ORIGIN_TIMEOUT_MS: String(o.originTimeoutMs),
          MAX_ATTEMPTS: "2",
          ISOLATE_CACHE_SECONDS: "3600",
          DEBUG_TOKEN: TOKEN,
        },
      },
    ],
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
