import type { RoutingState, Snapshot } from "../intent/routing-state.js";
import { RoutingIndex } from "./routing-index.js";

/**
 * Decodes and validates every entry under `prefix`. Invalid values are dropped and reported;
 * unknown keys are reported and ignored. Never throws. (The pusher keeps a {@link RoutingIndex}
 * instead, which decodes only the keys that changed.)
 */
export function decodeSnapshot(snapshot: Snapshot, prefix: string): RoutingState {
  const index = new RoutingIndex(prefix);
  index.reset([...snapshot.entries].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
  return index.state();
}
