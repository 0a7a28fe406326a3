import type { CanaryRequest } from "./canary-flags.js";
import { formatGates } from "./canary-gates.js";
import type { RouteShift } from "./edge-effect.js";

/** One changed route under a canary: where its stable and its canary viewers go. */
export interface CanarySides {
  readonly country: string;
  readonly stable: { readonly percent: number; readonly pool: string; readonly source: string };
  readonly canary: { readonly percent: number; readonly pool: string; readonly source: string };
}

/**
 * Both sides of each route a canary of `share` % would change (docs/reference.md §13): the
 * stable side keeps the route as it is, the canary side takes the proposed one.
 */
export function canarySides(shifts: readonly RouteShift[], share: number): CanarySides[] {
  return shifts.map((s) => ({
    country: s.country,
    stable: { percent: 100 - share, pool: s.before.pool, source: s.before.source },
    canary: { percent: share, pool: s.after.pool, source: s.after.source },
  }));
}

/** `plan --canary`'s lines: each changed route's two sides, and how the canary ends. */
export function formatCanarySides(sides: readonly CanarySides[], req: CanaryRequest): string[] {
  return [
    `Canary at ${req.share} %: each changed route's viewers split (sticky) between both sides:`,
    ...sides.map(
      (s) =>
        `  ${s.country}: stable ${s.stable.percent} % → ${s.stable.pool} (${s.stable.source}), canary ${s.canary.percent} % → ${s.canary.pool} (${s.canary.source})`,
    ),
    `  promoted after ${req.forS} s of passing gates, rolled back by the first failing one: ${formatGates(req.gates)}`,
  ];
}
