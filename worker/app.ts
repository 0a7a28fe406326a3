import type { Context } from "hono";
// The tiny preset (PatternRouter): four routes need no RegExpRouter, and the bundle is ~15 KB smaller.
import { Hono } from "hono/tiny";
import { requestCountry } from "./country.js";
import { debugAccess } from "./debug-access.js";
import { decide, type RoutingDecision } from "./decision.js";
import { EDGE_HEADERS } from "./edge-headers.js";
import type { Env } from "./env.js";
import { floorRoute } from "./floor-route.js";
import { publicOriginOf } from "./hide-origins.js";
import type { MapCache, WaitUntil } from "./map-cache.js";
import { originHostsOf } from "./origin-hosts.js";
import { proxyToOrigins } from "./proxy.js";
import { degradedHeader, edgeResponse } from "./respond.js";
import { settingsFromEnv, type WorkerSettings } from "./settings.js";
import { affinityCookieName, viewerKey } from "./viewer-key.js";

/** Dependencies of the edge app. */
export interface AppDeps {
  readonly mapCache: MapCache;
}

type EdgeContext = Context<{ Bindings: Env }>;

const NO_STORE = { "Cache-Control": "no-store" } as const;

function plain(status: number, text: string): Response {
  return new Response(`${text}\n`, {
    status,
    headers: { "Content-Type": "text/plain; charset=utf-8", ...NO_STORE },
  });
}

/** The request's execution context; Hono's getter throws where there is none (not in workerd). */
function executionCtxOf(c: EdgeContext): WaitUntil | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}

/**
 * The edge Worker: `/__edge/health`, `/__edge/route` (debug token only; 404 otherwise, so the
 * path reveals nothing) and everything else proxied to the visitor's route. The whole
 * `/__edge/` namespace belongs to the edge and is never proxied.
 */
export function createApp(deps: AppDeps): Hono<{ Bindings: Env }> {
  const app = new Hono<{ Bindings: Env }>();

  const snapshot = (c: EdgeContext, settings: WorkerSettings) =>
    deps.mapCache.current(c.env.ROUTING, settings, executionCtxOf(c));

  app.get("/__edge/health", async (c) => {
    const settings = settingsFromEnv(c.env);
    const snap = await snapshot(c, settings);
    return c.json({ ok: true, rev: snap.map?.rev ?? null }, 200, NO_STORE);
  });

  app.get("/__edge/route", async (c) => {
    const settings = settingsFromEnv(c.env);
    const request = c.req.raw;
    if (!debugAccess(request.headers, settings.debugToken)) return plain(404, "Not Found");
    const snap = await snapshot(c, settings);
    const viewer = () => viewerKey(request, affinityCookieName(c.env.AFFINITY_COOKIE), true);
    const decision: RoutingDecision = decide(snap, requestCountry(request, true), settings, viewer);
    return c.json(
      {
        country: decision.country,
        rev: decision.rev,
        epoch: snap.map?.epoch ?? null,
        map: snap.map ? (snap.stale ? "stale" : "fresh") : "none",
        degraded: degradedHeader(decision.degraded, false),
        route: decision.route,
      },
      200,
      NO_STORE,
    );
  });

  app.all("/__edge/*", () => plain(404, "Not Found"));

  app.all("*", async (c) => {
    const request = c.req.raw;
    if (request.headers.has(EDGE_HEADERS.hop)) return plain(508, "Loop Detected");
    const settings = settingsFromEnv(c.env);
    const debug = debugAccess(request.headers, settings.debugToken);
    const snap = await snapshot(c, settings);
    const viewer = () => viewerKey(request, affinityCookieName(c.env.AFFINITY_COOKIE), debug);
    const decision = decide(snap, requestCountry(request, debug), settings, viewer);
    const outcome = await proxyToOrigins(request, decision.route, {
      country: decision.country,
      rev: decision.rev ?? 0,
      maxAttempts: settings.maxAttempts,
      originTimeoutMs: settings.originTimeoutMs,
    });
    return edgeResponse(decision, outcome, {
      debug,
      originHosts: () => originHostsOf(snap.map, [decision.route, floorRoute(settings)]),
      publicOrigin: () => publicOriginOf(request.url),
    });
  });

  // Nothing in routing data may turn into a 500: whatever slipped through is a bad gateway.
  app.onError((err) => {
    console.error("edge: unexpected error", err instanceof Error ? err.name : typeof err);
    return plain(502, "Bad Gateway");
  });

  return app;
}
