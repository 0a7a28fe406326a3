import type { Context } from "hono";
// The tiny preset (PatternRouter): four routes need no RegExpRouter, and the bundle is ~15 KB smaller.
import { Hono } from "hono/tiny";
import { badGateway } from "./bad-gateway.js";
import { cacheSettings } from "./cache/cache-settings.js";
import type { EdgeCache } from "./cache/edge-cache.js";
import { purgeRoute } from "./cache/purge-route.js";
import { requestCountry } from "./country.js";
import { debugAccess } from "./debug-access.js";
import { decide, type RoutingDecision } from "./decision.js";
import { edgeProxy } from "./edge-proxy.js";
import type { Env } from "./env.js";
import type { MapCache, WaitUntil } from "./map-cache.js";
import { observationsRoute } from "./observe/observations-route.js";
import { observedProxy } from "./observe/observed-proxy.js";
import type { ViewerRecorder } from "./observe/recorder.js";
import type { OutlierEjection } from "./outlier-ejection.js";
import { plainResponse } from "./plain-response.js";
import { degradedHeader } from "./respond.js";
import { settingsFromEnv, type WorkerSettings } from "./settings.js";
import { SteerLimiter } from "./steer/steer-limiter.js";
import { steerRoute } from "./steer/steer-route.js";
import { affinityCookieName, viewerKey } from "./viewer-key.js";

/** Dependencies of the edge app. */
export interface AppDeps {
  readonly mapCache: MapCache;
  /** The isolate's outlier ejection (docs/reference.md §4). */
  readonly ejection: OutlierEjection;
  /** The isolate's sums of what viewers got (docs/reference.md §12); absent: nothing is recorded. */
  readonly recorder?: ViewerRecorder;
  /** The isolate's edge cache (docs/caching.md); absent: every request goes to the origins. */
  readonly cache?: EdgeCache;
  /** The isolate's budget of steering requests (docs/reference.md §15); absent: a new one. */
  readonly steerLimiter?: SteerLimiter;
}

type EdgeContext = Context<{ Bindings: Env }>;

const NO_STORE = { "Cache-Control": "no-store" } as const;

/** The request's execution context; Hono's getter throws where there is none (not in workerd). */
function executionCtxOf(c: EdgeContext): WaitUntil | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}

/** A viewer's request: proxied (`edgeProxy`), and recorded when the isolate has a recorder. */
export function viewerRequest(
  deps: AppDeps,
  request: Request,
  env: Env,
  ctx: WaitUntil | undefined,
): Promise<Response> {
  const proxy = () => edgeProxy(request, env, deps.mapCache, deps.ejection, ctx, deps.cache);
  return deps.recorder ? observedProxy(request, env, ctx, deps.recorder, proxy) : proxy();
}

/**
 * The edge app: `/__edge/health`, `/__edge/route` (debug token only; 404 otherwise, so the
 * path reveals nothing), `/__edge/observations` (`OBSERVE_TOKEN` only), `/__edge/purge`
 * (`PURGE_TOKEN` only), the players' steering manifests (`/__edge/steer/hls`,
 * `/__edge/steer/dash`) and everything else proxied to the visitor's route (`edgeProxy`). The
 * whole `/__edge/` namespace belongs to the edge and is never proxied.
 */
export function createApp(deps: AppDeps): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();

  const heldMap = (c: EdgeContext, settings: WorkerSettings) =>
    deps.mapCache.current(c.env.ROUTING, settings, executionCtxOf(c));

  app.get("/__edge/health", async (c) => {
    const settings = settingsFromEnv(c.env);
    const held = await heldMap(c, settings);
    return c.json({ ok: true, rev: held.map?.rev ?? null }, 200, NO_STORE);
  });

  app.get("/__edge/route", async (c) => {
    const settings = settingsFromEnv(c.env);
    const request = c.req.raw;
    if (!debugAccess(request.headers, settings.debugToken)) return plainResponse(404, "Not Found");
    const held = await heldMap(c, settings);
    const viewer = () => viewerKey(request, affinityCookieName(c.env.AFFINITY_COOKIE), true);
    const decision: RoutingDecision = decide(held, requestCountry(request, true), settings, viewer);
    return c.json(
      {
        country: decision.country,
        rev: decision.rev,
        epoch: held.map?.epoch ?? null,
        map: held.map ? (held.stale ? "stale" : "fresh") : "none",
        degraded: degradedHeader(decision.degraded, false),
        route: decision.route,
        ...(decision.canary ? { canary: decision.canary } : {}),
      },
      200,
      NO_STORE,
    );
  });

  app.get("/__edge/observations", (c) => observationsRoute(c.req.raw, c.env));

  app.all("/__edge/purge", async (c) => {
    if (!deps.cache) return plainResponse(404, "Not Found");
    const settings = settingsFromEnv(c.env);
    const held = await heldMap(c, settings);
    return purgeRoute(c.req.raw, cacheSettings(c.env), deps.cache.store, held.map);
  });
  const steer = { ...deps, limiter: deps.steerLimiter ?? new SteerLimiter() };
  app.get("/__edge/steer/hls", (c) =>
    steerRoute("hls", c.req.raw, c.env, steer, executionCtxOf(c)),
  );
  app.get("/__edge/steer/dash", (c) =>
    steerRoute("dash", c.req.raw, c.env, steer, executionCtxOf(c)),
  );

  app.all("/__edge/*", () => plainResponse(404, "Not Found"));
  app.all("*", (c) => viewerRequest(deps, c.req.raw, c.env, executionCtxOf(c)));
  app.onError(badGateway);
  return app;
}
