import type { CompiledMap, PoolShed } from "../contract/compiled-map.js";
import type { RoutingState } from "../intent/routing-state.js";
import type { SlowMs } from "../intent/schema.js";
import type { CarriedState } from "./carried-state.js";

/** A shed share moves in steps of this many percent. */
export const SHED_STEP = 10;
/** How long a shed share holds before it may fall by one step (`SHED_RECOVER_SECONDS`). */
export const DEFAULT_SHED_RECOVER_SECONDS = 60;

/**
 * The share a pool's p90 asks for (docs/reference.md §9): 0 at or below `low`, 100 at or above
 * `high`, linear in between, rounded down to a step. 0 without watermarks or a p90.
 */
export function shedTarget(p90: number | undefined, slow: SlowMs | undefined): number {
  if (!slow || p90 === undefined || p90 <= slow.low) return 0;
  if (p90 >= slow.high) return 100;
  const percent = ((p90 - slow.low) * 100) / (slow.high - slow.low);
  return Math.floor(percent / SHED_STEP + 1e-9) * SHED_STEP;
}

/** The p90 at which `share` begins: below it, the share may step down. */
export function shedLevel(share: number, slow: SlowMs): number {
  return slow.low + ((slow.high - slow.low) * share) / 100;
}

/**
 * The share a falling p90 lets a pool step down to: the p90 must lie half a step below a step's
 * level before the share falls under that step, so a p90 that wanders around one level moves
 * nothing back and forth (hysteresis).
 */
export function shedFallTarget(p90: number | undefined, slow: SlowMs | undefined): number {
  if (!slow || p90 === undefined) return 0;
  return shedTarget(p90 + ((slow.high - slow.low) * SHED_STEP) / 200, slow);
}

/**
 * A pool's next share: it rises at once to `rise`; it falls toward `fall` by one step once the
 * p90 has stayed low enough to fall (`fall` below the share, at every compile since
 * `below_since`) for `recoverMs`, counted from the share's last change at the earliest.
 * `undefined` for a share of 0. `below_since` alone never causes a KV `routes` write
 * (`routingText`), so a map read back from KV is taken without it (`withoutFallClocks`).
 */
export function nextShed(
  previous: PoolShed | undefined,
  rise: number,
  fall: number,
  nowMs: number,
  recoverMs: number,
): PoolShed | undefined {
  const share = previous?.share ?? 0;
  const now = new Date(nowMs).toISOString();
  if (rise > share) return { share: rise, at: now };
  if (!previous) return undefined;
  if (fall >= share) {
    if (previous.below_since === undefined) return previous;
    return { share: previous.share, at: previous.at };
  }
  const below = previous.below_since ?? now;
  const since = stepClock(previous.at, below);
  if (Number.isFinite(since) && nowMs - since < recoverMs)
    return below === previous.below_since ? previous : { ...previous, below_since: below };
  const next = Math.max(fall, share - SHED_STEP);
  return next > 0 ? { share: next, at: now, below_since: below } : undefined;
}

/** When a falling share's recover period started: its last change, or the p90's fall after it. */
function stepClock(at: string, belowSince: string): number {
  return Math.max(Date.parse(at), Date.parse(belowSince));
}

/** `sheds[pool]`, when it is a shed one compile could have written (a map from KV may hold junk). */
export function carriedShed(
  sheds: Readonly<Record<string, PoolShed>> | undefined,
  pool: string,
): PoolShed | undefined {
  if (!sheds || !Object.hasOwn(sheds, pool)) return undefined;
  const s = sheds[pool];
  if (!s || !Number.isInteger(s.share) || s.share < SHED_STEP || s.share > 100) return undefined;
  if (s.share % SHED_STEP !== 0 || typeof s.at !== "string") return undefined;
  if (s.below_since !== undefined && typeof s.below_since !== "string")
    return { share: s.share, at: s.at };
  return s;
}

/**
 * When (ms) `shed`, falling toward `fall`, may step down next; `null` when it is not falling.
 */
export function stepDueAt(
  shed: PoolShed,
  fall: number,
  nowMs: number,
  recoverMs: number,
): number | null {
  if (fall >= shed.share) return null;
  const since = stepClock(shed.at, shed.below_since ?? shed.at);
  return Number.isFinite(since) ? since + recoverMs : nowMs;
}

/** Every shedding pool's share, and when the compile must run again for a step down. */
export interface PoolSheds {
  /** By pool name, whatever order the state's pools came in. */
  readonly sheds: ReadonlyMap<string, PoolShed>;
  /** The earliest instant (ms) a share may step down with no etcd change; `null` when none. */
  readonly nextStepAt: number | null;
}

/**
 * The shed share of every healthy pool with `slow_ms`, stepped from the previous map's (the
 * hysteresis state it carries in `sheds`). Pure: the time comes in as `nowMs`.
 */
export function poolSheds(
  state: Pick<RoutingState, "pools" | "health">,
  previous: CarriedState | null,
  nowMs: number,
  recoverMs: number,
): PoolSheds {
  const sheds = new Map<string, PoolShed>();
  let nextStepAt: number | null = null;
  for (const [pool, def] of state.pools) {
    if (!def.slow_ms) continue;
    const health = state.health.get(pool);
    if (health?.status !== "healthy") continue;
    const rise = shedTarget(health.p90_ms, def.slow_ms);
    const fall = shedFallTarget(health.p90_ms, def.slow_ms);
    const shed = nextShed(carriedShed(previous?.sheds, pool), rise, fall, nowMs, recoverMs);
    if (!shed) continue;
    sheds.set(pool, shed);
    const due = stepDueAt(shed, fall, nowMs, recoverMs);
    if (due !== null && (nextStepAt === null || due < nextStepAt)) nextStepAt = due;
  }
  // The map carries `sheds` in this order: a state decoded key by key and one decoded afresh
  // may hold their pools in different orders, and must still compile to the same map.
  const byPool = sheds.size > 1 ? new Map([...sheds].sort(([a], [b]) => (a < b ? -1 : 1))) : sheds;
  return { sheds: byPool, nextStepAt };
}

/**
 * `map` as a compile takes it back from KV (after a restart, a takeover, or in edgectl): each
 * shed's `below_since` dropped, viewer sheds' too. KV's `routes` is not rewritten when only
 * `below_since` changes (docs/reference.md §3), so its copy may be older than the p90's last
 * rise; dropping it restarts the fall clock, which can only delay a step down, never hasten one.
 */
export function withoutFallClocks(map: CompiledMap): CompiledMap {
  const clocked = (sheds: Readonly<Record<string, PoolShed>> | undefined) =>
    sheds !== undefined && Object.values(sheds).some((s) => s?.below_since !== undefined);
  const viewers = map.viewer_sheds;
  const viewersClocked = viewers !== undefined && Object.values(viewers).some(clocked);
  if (!clocked(map.sheds) && !viewersClocked) return map;
  return {
    ...map,
    ...(map.sheds ? { sheds: stripClocks(map.sheds) } : {}),
    ...(viewers && viewersClocked
      ? {
          viewer_sheds: Object.fromEntries(
            Object.entries(viewers).map(([cc, sheds]) => [cc, stripClocks(sheds)]),
          ),
        }
      : {}),
  };
}

function stripClocks(sheds: Readonly<Record<string, PoolShed>>): Record<string, PoolShed> {
  return Object.fromEntries(
    Object.entries(sheds).map(([pool, s]) => [pool, { share: s.share, at: s.at }]),
  );
}
