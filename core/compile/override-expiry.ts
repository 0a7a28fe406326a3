import type { RoutingState } from "../intent/routing-state.js";
import type { OverrideRule } from "../intent/schema.js";

/** Milliseconds since the epoch at which an override ends; `null` when it has no `expires_at`. */
export function overrideExpiry(rule: OverrideRule): number | null {
  if (rule.expires_at === undefined) return null;
  const at = Date.parse(rule.expires_at);
  return Number.isFinite(at) ? at : null;
}

/**
 * The state without the overrides whose `expires_at` is at or before `now`: a boost ends on time
 * even while etcd keeps its lease alive (etcd renews lease TTLs on a leader change). An expired
 * override is not a problem, just over; the key itself goes when its lease does.
 */
export function withoutExpiredOverrides(state: RoutingState, now: Date): RoutingState {
  const t = now.getTime();
  let expired = false;
  for (const rule of state.overrides.values()) {
    const at = overrideExpiry(rule);
    if (at !== null && at <= t) expired = true;
  }
  if (!expired) return state;
  const overrides = new Map<string, OverrideRule>();
  for (const [cc, rule] of state.overrides) {
    const at = overrideExpiry(rule);
    if (at === null || at > t) overrides.set(cc, rule);
  }
  return { ...state, overrides };
}

/**
 * The earliest `expires_at` after `now` among the state's overrides (ms), else `null`: country
 * and `_default` overrides, and continent overrides (`override/EU`, `override/continent/NA`),
 * whose expiry compile honours too (`liveOverride`).
 */
export function nextOverrideExpiry(
  state: Pick<RoutingState, "overrides" | "continentOverrides">,
  now: Date,
): number | null {
  const t = now.getTime();
  let next: number | null = null;
  const consider = (rule: OverrideRule) => {
    const at = overrideExpiry(rule);
    if (at !== null && at > t && (next === null || at < next)) next = at;
  };
  for (const rule of state.overrides.values()) consider(rule);
  for (const o of state.continentOverrides.values()) consider(o.rule);
  return next;
}
