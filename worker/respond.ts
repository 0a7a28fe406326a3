import { type DegradedReason, formatSplit } from "../core/index.js";
import type { RoutingDecision } from "./decision.js";
import { EDGE_HEADERS, stripEdgeHeaders } from "./edge-headers.js";
import type { ProxyOutcome } from "./proxy.js";

/**
 * The client's response: the origin's status, headers and body, minus any `X-Edge-*` the
 * origin sent (it could leak an origin), plus the edge's own headers. `X-Edge-Origin` only
 * with debug access.
 */
export function edgeResponse(
  decision: RoutingDecision,
  outcome: ProxyOutcome,
  debug: boolean,
): Response {
  const response = new Response(outcome.response.body, outcome.response);
  const h = response.headers;
  stripEdgeHeaders(h);
  h.set(EDGE_HEADERS.pool, outcome.link.pool);
  h.set(EDGE_HEADERS.country, decision.country);
  h.set(EDGE_HEADERS.revision, String(decision.rev ?? 0));
  h.set(EDGE_HEADERS.source, decision.route.source);
  const failedOver = outcome.tried.length > 1;
  const degraded = degradedHeader(decision.degraded, failedOver);
  if (degraded) h.set(EDGE_HEADERS.degraded, degraded);
  if (failedOver) h.set(EDGE_HEADERS.failover, outcome.tried.join(">"));
  if (decision.route.weights) h.set(EDGE_HEADERS.split, formatSplit(decision.route.weights));
  if (debug) h.set(EDGE_HEADERS.origin, outcome.link.origin);
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
