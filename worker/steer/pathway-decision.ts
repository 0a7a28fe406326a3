import type { DegradedReason } from "../../core/contract/compiled-map.js";
import type { IsEjected } from "../../core/contract/pathway-order.js";
import type { RoutingDecision } from "../decision.js";
import { pinnedRoute } from "./pathway-pin.js";

/**
 * The decision for a request that asks for pathway `pool` (docs/reference.md §15): pinned to it
 * when `pinnedRoute` allows, else the decision as it was with `pathway-refused` added to its
 * degraded reasons.
 */
export function pathwayDecision(
  decision: RoutingDecision,
  pool: string,
  isEjected: IsEjected,
): RoutingDecision {
  const route = pinnedRoute(decision.route, pool, isEjected);
  if (route === decision.route) return decision;
  if (route !== null) return { ...decision, route };
  const degraded: readonly DegradedReason[] = [...decision.degraded, "pathway-refused"];
  return { ...decision, degraded };
}
