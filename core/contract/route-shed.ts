import type { Route, RouteShed, RouteWeight } from "./compiled-map.js";

/** Route weights sum to this once a shed is compiled into them. */
const SHED_TOTAL = 1000;
const EPSILON = 1e-9;

/**
 * A route with its pools' shed shares compiled into its weights (docs/reference.md §9). Each
 * pool keeps (100 − share) % of the viewers it gets and hands the rest to the next pool of the
 * chain, which may shed again; what the last pool cannot hand on goes back to the chain's least
 * shed pool. Weighted rendezvous hashing then moves only the viewers a share change must move.
 * When every pool of the chain is fully shed, the route stays as it is, degraded
 * `all-pools-slow`. A route no shed touches is returned as it is. Pools in `byViewers` shed by
 * the country's own viewers (§12): their entries in `shed` say so.
 */
export function shedRoute(
  route: Route,
  shares: ReadonlyMap<string, number>,
  byViewers?: ReadonlySet<string>,
): Route {
  if (route.degraded !== null || shares.size === 0) return route;
  const pools = route.chain.map((c) => c.pool);
  const share = pools.map((p) => (shares.get(p) ?? 0) / 100);
  if (!share.some((s) => s > 0)) return route;
  if (share.every((s) => s >= 1)) return { ...route, degraded: "all-pools-slow" };
  const base = baseWeights(route, pools);
  const total = base.reduce((a, b) => a + b, 0);
  if (total <= 0) return route;
  const input = pools.map(() => 0);
  const kept = pools.map(() => 0);
  let carry = 0;
  pools.forEach((_, i) => {
    const got = (base[i] ?? 0) / total + carry;
    const s = share[i] ?? 0;
    input[i] = got;
    kept[i] = got * (1 - s);
    carry = got * s;
  });
  if (carry > EPSILON) {
    let least = 0;
    share.forEach((s, i) => {
      if (s < (share[least] ?? 1)) least = i;
    });
    kept[least] = (kept[least] ?? 0) + carry;
  }
  const shed: RouteShed[] = [];
  pools.forEach((pool, i) => {
    const s = share[i] ?? 0;
    if (s > 0 && (input[i] ?? 0) > EPSILON && (kept[i] ?? 0) < (input[i] ?? 0) - EPSILON) {
      const entry: RouteShed = { pool, share: Math.round(s * 100) };
      shed.push(byViewers?.has(pool) ? { ...entry, by: "viewers" } : entry);
    }
  });
  if (shed.length === 0) return route;
  const weights: RouteWeight[] = [];
  pools.forEach((pool, i) => {
    const weight = Math.round((kept[i] ?? 0) * SHED_TOTAL);
    if (weight > 0) weights.push({ pool, weight });
  });
  return { ...route, weights, shed };
}

/** The route's weights over its chain: its own, else all of it on the first pool. */
function baseWeights(route: Route, pools: readonly string[]): number[] {
  const w = route.weights;
  if (!w || w.length === 0) return pools.map((_, i) => (i === 0 ? 1 : 0));
  return pools.map((p) => w.find((x) => x.pool === p)?.weight ?? 0);
}

/**
 * `X-Edge-Shed`: `fra-1:40`, comma-separated when several pools of the route shed; a shed by the
 * country's own viewers says so: `fra-1:40;by=viewers`.
 */
export function formatShed(shed: readonly RouteShed[]): string {
  return shed.map((s) => `${s.pool}:${s.share}${s.by ? `;by=${s.by}` : ""}`).join(",");
}
