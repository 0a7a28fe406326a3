import type { RoutingDecision } from "./decision.js";
import { EDGE_HEADERS } from "./edge-headers.js";
import { plainResponse } from "./plain-response.js";
import { degradedHeader } from "./respond.js";

/**
 * The answer for a fenced country with no pool inside its fence (docs/reference.md §10): 503,
 * never a pool outside the fence. No origin is contacted.
 */
export function fenceRefusal(decision: RoutingDecision): Response {
  const response = plainResponse(503, "Service Unavailable");
  const h = response.headers;
  h.set(EDGE_HEADERS.country, decision.country);
  h.set(EDGE_HEADERS.revision, String(decision.rev ?? 0));
  h.set(EDGE_HEADERS.source, decision.route.source);
  const degraded = degradedHeader(decision.degraded, false);
  if (degraded) h.set(EDGE_HEADERS.degraded, degraded);
  if (decision.route.fence !== undefined) h.set(EDGE_HEADERS.fence, decision.route.fence);
  if (decision.canary !== undefined) h.set(EDGE_HEADERS.canary, decision.canary);
  return response;
}
