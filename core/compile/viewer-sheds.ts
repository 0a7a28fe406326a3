import type { PoolShed } from "../contract/compiled-map.js";
import { isCountryCode } from "../contract/countries.js";
import type { RoutingState } from "../intent/routing-state.js";
import type { SlowMs } from "../intent/schema.js";
import type { CarriedState } from "./carried-state.js";
import { carriedShed, nextShed, shedFallTarget, shedTarget, stepDueAt } from "./shed-share.js";

/** Each country's viewer sheds, and when the compile must run again for a step down. */
export interface ViewerSheds {
  /** By country, then pool, both sorted; only shares above 0. */
  readonly sheds: ReadonlyMap<string, ReadonlyMap<string, PoolShed>>;
  /** The earliest instant (ms) a share may step down with no etcd change; `null` when none. */
  readonly nextStepAt: number | null;
}

/**
 * The watermarks a country's viewers shed `pool` by: its `slow_ms`, while it is defined with
 * `viewers: true` and healthy. Otherwise `undefined`: its viewer sheds stop at once, as a pool's
 * own shed does (docs/reference.md §9).
 */
function viewerWatermarks(
  state: Pick<RoutingState, "pools" | "health">,
  pool: string,
): SlowMs | undefined {
  const def = state.pools.get(pool);
  if (def?.viewers !== true || !def.slow_ms) return undefined;
  return state.health.get(pool)?.status === "healthy" ? def.slow_ms : undefined;
}

/**
 * The shed of each (country, `viewers: true` pool) by the country's own viewers' p90
 * (`observed/{CC}/{pool}`, docs/reference.md §12), stepped from the carried one by §9's rules:
 * it rises at once, falls one step per recover period while the p90 stays low. A country whose
 * observation is gone (too few of its viewers left on the pool to judge it) steps down the same
 * way, so a few viewers measure the pool again. Pure: the time comes in as `nowMs`.
 */
export function viewerSheds(
  state: Pick<RoutingState, "pools" | "health" | "observed">,
  previous: CarriedState | null,
  nowMs: number,
  recoverMs: number,
): ViewerSheds {
  const carried = previous?.viewer_sheds ?? {};
  const ccs = new Set(state.observed.keys());
  for (const cc of Object.keys(carried)) if (isCountryCode(cc)) ccs.add(cc);
  const out = new Map<string, Map<string, PoolShed>>();
  let nextStepAt: number | null = null;
  for (const cc of [...ccs].sort()) {
    const observed = state.observed.get(cc);
    const before = Object.hasOwn(carried, cc) ? carried[cc] : undefined;
    const pools = new Set([...(observed?.keys() ?? []), ...Object.keys(before ?? {})]);
    for (const pool of [...pools].sort()) {
      const slow = viewerWatermarks(state, pool);
      if (!slow) continue;
      const p90 = observed?.get(pool)?.p90_ms;
      const fall = shedFallTarget(p90, slow);
      const previousShed = carriedShed(before, pool);
      const shed = nextShed(previousShed, shedTarget(p90, slow), fall, nowMs, recoverMs);
      if (!shed) continue;
      const byPool = out.get(cc) ?? new Map<string, PoolShed>();
      byPool.set(pool, shed);
      out.set(cc, byPool);
      const due = stepDueAt(shed, fall, nowMs, recoverMs);
      if (due !== null && (nextStepAt === null || due < nextStepAt)) nextStepAt = due;
    }
  }
  return { sheds: out, nextStepAt };
}

/** The shares alone (percent), by country and then pool. */
export function viewerShares(
  sheds: ViewerSheds["sheds"],
): ReadonlyMap<string, ReadonlyMap<string, number>> {
  return new Map(
    [...sheds].map(([cc, byPool]) => [cc, new Map([...byPool].map(([p, s]) => [p, s.share]))]),
  );
}

/** The map's `viewer_sheds`, or nothing when no country sheds. */
export function viewerShedsMember(sheds: ViewerSheds["sheds"]): {
  viewer_sheds?: Record<string, Record<string, PoolShed>>;
} {
  if (sheds.size === 0) return {};
  return {
    viewer_sheds: Object.fromEntries(
      [...sheds].map(([cc, byPool]) => [cc, Object.fromEntries(byPool)]),
    ),
  };
}
