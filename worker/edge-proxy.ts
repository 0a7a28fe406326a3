import { pathwayOrder } from "../core/contract/pathway-order.js";
import { steerSettings } from "../core/contract/steer-settings.js";
import { cacheSettings } from "./cache/cache-settings.js";
import type { EdgeCache } from "./cache/edge-cache.js";
import { requestCountry } from "./country.js";
import { debugAccess } from "./debug-access.js";
import { decide } from "./decision.js";
import { EDGE_HEADERS } from "./edge-headers.js";
import type { Env } from "./env.js";
import { fenceRefusal } from "./fence-refusal.js";
import { publicOriginOf } from "./hide-origins.js";
import type { MapCache, WaitUntil } from "./map-cache.js";
import { noMapRoute } from "./no-map-route.js";
import { originHostsOf } from "./origin-hosts.js";
import type { OutlierEjection } from "./outlier-ejection.js";
import { plainResponse } from "./plain-response.js";
import { proxyToOrigins } from "./proxy.js";
import { edgeResponse } from "./respond.js";
import { settingsFromEnv } from "./settings.js";
import { pathwayDecision } from "./steer/pathway-decision.js";
import { takePathway } from "./steer/pathway-param.js";
import { steeredResponse } from "./steer/steered-response.js";
import { affinityCookieName, viewerKey } from "./viewer-key.js";

/**
 * Proxies a visitor's request (anything outside `/__edge/`) to its route: loop check, country,
 * the isolate's map, the decision, the origins, the edge's response headers. This is every
 * viewer request's path: each step here is paid once per request. With an edge cache, a fresh
 * copy answers instead of the origins (docs/caching.md); either way the response leaves through
 * the same `edgeResponse`, so hits keep the header hygiene of misses.
 */
export async function edgeProxy(
  request: Request,
  env: Env,
  mapCache: MapCache,
  ejection: OutlierEjection,
  ctx: WaitUntil | undefined,
  cache?: EdgeCache,
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
  const toOrigins = () =>
    proxyToOrigins(forwarded, decision.route, {
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
  const cached = cache
    ? await cache.proxy(
        {
          request: forwarded,
          route: decision.route,
          country: decision.country,
          settings: cacheSettings(env),
          originTimeoutMs: settings.originTimeoutMs,
          background: ctx,
        },
        toOrigins,
      )
    : { outcome: await toOrigins(), status: "BYPASS" as const };
  const response = edgeResponse(
    decision,
    cached.outcome,
    {
      debug,
      originHosts: () => originHostsOf(snap.map, [decision.route, noMapRoute(settings)]),
      publicOrigin: () => publicOriginOf(request.url),
    },
    cached.status,
  );
  if (!steer.rewrite) return response;
  // The cache holds the origin's playlist; each viewer's copy is steered by its own route.
  const pools = pathwayOrder(decision.route, isEjected);
  return steeredResponse(forwarded, response, { pools, param: steer.param });
}
