import type { DegradedReason } from "../core/contract/compiled-map.js";
import type { CacheStatus } from "./cache/edge-cache.js";
import type { RoutingDecision } from "./decision.js";
import { EDGE_HEADERS, isEdgeHeader } from "./edge-headers.js";
import { hideOriginsInHeaders, ORIGIN_BEARING_HEADERS, type PublicOrigin } from "./hide-origins.js";
import { isEdgeAnswer, markEdgeAnswer } from "./plain-response.js";
import type { ProxyOutcome } from "./proxy.js";
import { keepFacts } from "./response-facts.js";
import { shedHeader } from "./shed-header.js";
import { splitHeader } from "./split.js";

/** Headers that let a shared cache (or Cloudflare's) keep a response despite `no-store`. */
const SHARED_CACHE_HEADERS = [
  "cdn-cache-control",
  "cloudflare-cdn-cache-control",
  "surrogate-control",
];

/**
 * What the response must not reveal, and to whom it may. The origin hosts and the public origin
 * are asked for only when the origin's response has a header that can name an origin.
 */
export interface ResponseView {
  readonly debug: boolean;
  /** Host names of every origin of the map (and of the decided route). */
  readonly originHosts: () => ReadonlySet<string>;
  readonly publicOrigin: () => PublicOrigin;
}

/**
 * One pass over the origin's response headers: removes every `X-Edge-*` in any spelling
 * (`isEdgeHeader`: it could leak an origin, or pass for the edge's own) and says whether any
 * header that can carry an origin URL or cookie domain is present.
 */
function stripEdgeAndSpotOrigins(headers: Headers): boolean {
  let doomed: string[] | undefined;
  let spotted = false;
  for (const name of headers.keys()) {
    if (isEdgeHeader(name)) {
      doomed ??= [];
      doomed.push(name);
    } else if (!spotted && ORIGIN_BEARING_HEADERS.has(name)) spotted = true;
  }
  if (doomed) for (const name of doomed) headers.delete(name);
  return spotted;
}

/**
 * The client's response: the origin's status, headers and body, minus any `X-Edge-*` the
 * origin sent (it could leak an origin), with origin URLs and cookie domains in its headers
 * turned to the public host, plus the edge's own headers (`X-Edge-Cache`: `cache`). `X-Edge-Origin`
 * only with debug access, and then never cacheable by anyone but the client.
 */
export function edgeResponse(
  decision: RoutingDecision,
  outcome: ProxyOutcome,
  view: ResponseView,
  cache: CacheStatus,
): Response {
  const response = new Response(outcome.response.body, outcome.response);
  if (isEdgeAnswer(outcome.response)) markEdgeAnswer(response);
  const h = response.headers;
  if (stripEdgeAndSpotOrigins(h)) hideOriginsInHeaders(h, view.originHosts(), view.publicOrigin());
  h.set(EDGE_HEADERS.pool, outcome.link.pool);
  h.set(EDGE_HEADERS.country, decision.country);
  h.set(EDGE_HEADERS.revision, String(decision.rev ?? 0));
  h.set(EDGE_HEADERS.source, decision.route.source);
  const failedOver = outcome.tried.length > 1;
  const degraded = degradedHeader(decision.degraded, failedOver);
  if (degraded) h.set(EDGE_HEADERS.degraded, degraded);
  if (failedOver) h.set(EDGE_HEADERS.failover, outcome.tried.join(">"));
  if (decision.route.weights) h.set(EDGE_HEADERS.split, splitHeader(decision.route.weights));
  if (decision.route.shed) h.set(EDGE_HEADERS.shed, shedHeader(decision.route.shed));
  if (decision.route.fence !== undefined) h.set(EDGE_HEADERS.fence, decision.route.fence);
  if (decision.canary !== undefined) h.set(EDGE_HEADERS.canary, decision.canary);
  h.set(EDGE_HEADERS.cache, cache);
  keepFacts(response, {
    pool: outcome.link.pool,
    country: decision.country,
    side: decision.canary ?? "",
    failover: failedOver,
    cache,
  });
  if (view.debug) {
    h.set(EDGE_HEADERS.origin, outcome.link.origin);
    h.set("Cache-Control", "private, no-store");
    for (const name of SHARED_CACHE_HEADERS) h.delete(name);
  }
  return response;
}

/** `X-Edge-Degraded`: the decision's reasons, then `origin-failover`; `null` when healthy. */
export function degradedHeader(
  reasons: readonly DegradedReason[],
  failedOver: boolean,
): string | null {
  if (!failedOver) return reasons.length === 0 ? null : reasons.join(",");
  return reasons.length === 0 ? "origin-failover" : `${reasons.join(",")},origin-failover`;
}
