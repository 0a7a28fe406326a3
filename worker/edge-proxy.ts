import { requestCountry } from "./country.js";
import { debugAccess } from "./debug-access.js";
import { decide } from "./decision.js";
import { EDGE_HEADERS } from "./edge-headers.js";
import type { Env } from "./env.js";
import { fenceRefusal } from "./fence-refusal.js";
import { floorRoute } from "./floor-route.js";
import { publicOriginOf } from "./hide-origins.js";
import type { MapCache, WaitUntil } from "./map-cache.js";
import { originHostsOf } from "./origin-hosts.js";
import type { OutlierEjection } from "./outlier-ejection.js";
import { plainResponse } from "./plain-response.js";
import { proxyToOrigins } from "./proxy.js";
import { edgeResponse } from "./respond.js";
import { settingsFromEnv } from "./settings.js";
import { pathwayDecision } from "./steer/pathway-decision.js";
import { takePathway } from "./steer/pathway-param.js";
import { pathwayPriority } from "./steer/pathway-priority.js";
import { steerSettings } from "./steer/steer-settings.js";
import { steeredResponse } from "./steer/steered-response.js";
import { affinityCookieName, viewerKey } from "./viewer-key.js";

/**
 * Proxies a visitor's request (anything outside `/__edge/`) to its route: loop check, country,
 * the isolate's map, the decision, the origins, the edge's response headers. This is every
 * viewer request's path: each step here is paid once per request.
 */
export async function edgeProxy(
  request: Request,
  env: Env,
  mapCache: MapCache,
  ejection: OutlierEjection,
  ctx: WaitUntil | undefined,
): Promise<Response> {
  const headers = request.headers;
  if (headers.has(EDGE_HEADERS.hop)) return plainResponse(508, "Loop Detected");
  const settings = settingsFromEnv(env);
  const debug = debugAccess(headers, settings.debugToken);
  const current = mapCache.current(env.ROUTING, settings, ctx);
  const snap = current instanceof Promise ? await current : current;
  const viewer = () => viewerKey(request, affinityCookieName(env.AFFINITY_COOKIE), debug);
  const decided = decide(snap, requestCountry(request, debug), settings, viewer);
  if (decided.route.degraded === "fence-unsatisfiable") return fenceRefusal(decided);
  const steer = steerSettings(env);
  const isEjected = (origin: string) => ejection.isEjected(origin, settings);
  // The pathway parameter is the edge's: taken out before any origin (or cache) sees the URL.
  const pin = takePathway(request.url, steer.param);
  const forwarded = pin ? new Request(pin.url, request) : request;
  const decision = pin ? pathwayDecision(decided, pin.pathway, isEjected) : decided;
  const outcome = await proxyToOrigins(forwarded, decision.route, {
    country: decision.country,
    rev: decision.rev ?? 0,
    maxAttempts: settings.maxAttempts,
    originTimeoutMs: settings.originTimeoutMs,
    hedgeMs: settings.hedgeMs,
    signingSecrets: settings.signingSecrets,
    onceTimeoutMs: settings.onceTimeoutMs,
    ejection,
    ejectionSettings: settings,
    background: ctx,
  });
  const response = edgeResponse(decision, outcome, {
    debug,
    originHosts: () => originHostsOf(snap.map, [decision.route, floorRoute(settings)]),
    publicOrigin: () => publicOriginOf(request.url),
  });
  if (!steer.rewrite) return response;
  const pools = pathwayPriority(decision.route, isEjected);
  return steeredResponse(forwarded, response, { pools, param: steer.param });
}
