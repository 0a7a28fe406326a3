import { pathwayOrder } from "../../core/contract/pathway-order.js";
import { isPoolName } from "../../core/contract/pool-name.js";
import { steerSettings } from "../../core/contract/steer-settings.js";
import { type SteerFormat, steeringManifest } from "../../core/contract/steering-manifest.js";
import { SESSION_BASE_PARAM, steeringUri } from "../../core/contract/steering-uri.js";
import { requestCountry } from "../country.js";
import { debugAccess } from "../debug-access.js";
import { decide } from "../decision.js";
import { EDGE_HEADERS } from "../edge-headers.js";
import type { Env } from "../env.js";
import { fenceRefusal } from "../fence-refusal.js";
import type { MapCache, WaitUntil } from "../map-cache.js";
import type { ViewerRecorder } from "../observe/recorder.js";
import { recordSteering } from "../observe/steering-record.js";
import type { OutlierEjection } from "../outlier-ejection.js";
import { degradedHeader } from "../respond.js";
import { settingsFromEnv } from "../settings.js";
import { affinityCookieName, viewerKey } from "../viewer-key.js";
import { reportedPathway } from "./reported-pathway.js";
import type { SteerLimiter } from "./steer-limiter.js";

/** What the steering endpoints use of the isolate. */
export interface SteerDeps {
  readonly mapCache: MapCache;
  readonly ejection: OutlierEjection;
  readonly limiter: SteerLimiter;
  readonly recorder?: ViewerRecorder;
}

/** The pathway a player reports on its reload (`_HLS_pathway`, `_DASH_pathway`). */
const REPORTED: Record<SteerFormat, string> = { hls: "_HLS_pathway", dash: "_DASH_pathway" };

/** Steering manifests are for one viewer at one moment: no shared cache keeps them. */
const MANIFEST_HEADERS = {
  "Content-Type": "application/json",
  "Cache-Control": "private, no-store",
  // Players fetch it from the page's origin, which may not be the edge's.
  "Access-Control-Allow-Origin": "*",
} as const;

function tooMany(ttlS: number): Response {
  return new Response("Too Many Requests: steering is busy, keep your pathway\n", {
    status: 429,
    headers: {
      "Content-Type": "text/plain; charset=utf-8",
      "Cache-Control": "no-store",
      "Access-Control-Allow-Origin": "*",
      "Retry-After": String(ttlS),
    },
  });
}

/**
 * `GET /__edge/steer/hls` and `/__edge/steer/dash` (docs/reference.md §15): the viewer's pathway
 * order now, from the same map, split, health and ejection as its requests. 429 with
 * `Retry-After` past `STEER_RATE`; 503 for a fenced country with no pool inside its fence. A
 * player's report (its pathway, when a pool of its chain, and its throughput) is recorded (§12).
 */
export async function steerRoute(
  format: SteerFormat,
  request: Request,
  env: Env,
  deps: SteerDeps,
  ctx: WaitUntil | undefined,
): Promise<Response> {
  const steer = steerSettings(env);
  if (!deps.limiter.admit(steer.ratePerS)) return tooMany(steer.ttlS);
  const settings = settingsFromEnv(env);
  const debug = debugAccess(request.headers, settings.debugToken);
  const current = deps.mapCache.current(env.ROUTING, settings, ctx);
  const snap = current instanceof Promise ? await current : current;
  const viewer = () => viewerKey(request, affinityCookieName(env.AFFINITY_COOKIE), debug);
  const decision = decide(snap, requestCountry(request, debug), settings, viewer);
  const url = new URL(request.url);
  const on = reportedPathway(url.searchParams.get(REPORTED[format]), decision.route);
  if (deps.recorder && on !== null)
    recordSteering(deps.recorder, env, request, decision.country, on, ctx);
  if (decision.route.degraded === "fence-unsatisfiable") {
    const refused = fenceRefusal(decision);
    refused.headers.set("Retry-After", String(steer.ttlS));
    refused.headers.set("Access-Control-Allow-Origin", "*");
    return refused;
  }
  const base = url.searchParams.get(SESSION_BASE_PARAM);
  const session = base !== null && isPoolName(base) ? base : null;
  const priority = pathwayOrder(decision.route, (o) => deps.ejection.isEjected(o, settings));
  const body = steeringManifest(format, {
    ttlS: steer.ttlS,
    reloadUri: steeringUri(format, session),
    priority,
    base: session,
    param: steer.param,
  });
  const headers: Record<string, string> = {
    ...MANIFEST_HEADERS,
    [EDGE_HEADERS.country]: decision.country,
    [EDGE_HEADERS.revision]: String(decision.rev ?? 0),
  };
  const degraded = degradedHeader(decision.degraded, false);
  if (degraded) headers[EDGE_HEADERS.degraded] = degraded;
  return new Response(JSON.stringify(body), { status: 200, headers });
}
