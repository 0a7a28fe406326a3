import {
  type CompiledMap,
  DEFAULT_ISOLATE_CACHE_SECONDS,
  DEFAULT_KV_CACHE_TTL,
  edgeSettleSeconds,
  KV_PROPAGATION_SECONDS,
} from "../../core/index.js";

/** KV's `routes` is recent enough that some edge locations may still serve the previous map. */
export interface EdgeSettling {
  /** When the pusher compiled (and so wrote) the `routes` KV holds. */
  readonly writtenAt: string;
  /** When every location should serve it: `writtenAt` plus {@link edgeSettleSeconds}. */
  readonly settledBy: string;
}

/**
 * Whether a change KV holds may not yet be at every edge location: its `routes` was compiled less
 * than {@link edgeSettleSeconds} (the Worker's defaults) before `now`. `null` when settled, or
 * when there is no map or its `compiled_at` is not a time.
 */
export function edgeSettling(routes: CompiledMap | null, now: number): EdgeSettling | null {
  const written = routes ? Date.parse(routes.compiled_at) : Number.NaN;
  if (!Number.isFinite(written)) return null;
  const settled = written + edgeSettleSeconds() * 1000;
  if (now >= settled) return null;
  return { writtenAt: new Date(written).toISOString(), settledBy: new Date(settled).toISOString() };
}

/** The line `edgectl status` prints while {@link edgeSettling} says so. */
export function formatSettling(s: EdgeSettling, now: number): string {
  const ago = Math.max(0, Math.round((now - Date.parse(s.writtenAt)) / 1000));
  return `KV's routes were written ${ago} s ago: some edge locations may serve the previous map until about ${s.settledBy} (KV propagation ${KV_PROPAGATION_SECONDS} s or more, + KV_CACHE_TTL ${DEFAULT_KV_CACHE_TTL} s, + ISOLATE_CACHE_SECONDS ${DEFAULT_ISOLATE_CACHE_SECONDS} s)`;
}
