import type { CanaryGates, CompileResult, Route } from "../../core/index.js";

/** One route the canary changes: where its stable viewers go, and where its canary share goes. */
export interface UiCanaryRoute {
  /** The country, or `_default` for the default route. */
  readonly country: string;
  /** The stable side's first pool. */
  readonly stable: string;
  /** The canary side's first pool. */
  readonly canary: string;
  /** The canary side's healthy pools in failover order. */
  readonly canary_chain: readonly string[];
  /** Why the canary side is degraded; `null` when it is not. */
  readonly degraded: string | null;
}

/**
 * The running canary as the map compiled it (docs/reference.md §13): its id, share, gates and the
 * routes it changes, stable side beside canary side. Its state and the judge's figures are the
 * `/status` document's `canary` (they change without a compile).
 */
export interface UiCanary {
  readonly id: string;
  readonly share: number;
  readonly gates: CanaryGates;
  /** `_default` first, then countries in code order. */
  readonly routes: readonly UiCanaryRoute[];
}

function side(country: string, stable: Route, canary: Route): UiCanaryRoute {
  return {
    country,
    stable: stable.pool,
    canary: canary.pool,
    canary_chain: canary.chain.map((c) => c.pool),
    degraded: canary.degraded,
  };
}

/** The running canary of one compile, or `null` when none runs (or `canary/current` is invalid). */
export function toUiCanary(result: CompileResult): UiCanary | null {
  const running = result.state.canary;
  if (!running) return null;
  const { map } = result;
  // A map's canary of another id is not this canary's: its routes are left out, not mixed in.
  const compiled = map.canary?.id === running.id ? map.canary : undefined;
  const routes: UiCanaryRoute[] = [];
  if (compiled?.default) routes.push(side("_default", map.default, compiled.default));
  for (const cc of Object.keys(compiled?.countries ?? {}).sort()) {
    const canary = compiled?.countries[cc];
    if (canary) routes.push(side(cc, map.countries[cc] ?? map.default, canary));
  }
  return { id: running.id, share: running.share, gates: { ...running.gates }, routes };
}
