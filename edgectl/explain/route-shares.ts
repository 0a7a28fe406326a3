import { percentShares, type Route } from "../../core/index.js";

/** One pool's share of a route's viewers, in whole percent. */
export interface PoolShare {
  readonly pool: string;
  readonly percent: number;
}

/** The viewers' shares of a route: its weighted split, else all of them on its pool. */
export function routeShares(route: Pick<Route, "pool" | "weights">): PoolShare[] {
  const w = route.weights;
  if (!w || w.length === 0) return [{ pool: route.pool, percent: 100 }];
  const shares = percentShares(w);
  return w.map((x, i) => ({ pool: x.pool, percent: shares[i] ?? 0 }));
}

/** `fra-1 80% · ams-1 20%`. */
export function formatShares(route: Route): string {
  return routeShares(route)
    .map((s) => `${s.pool} ${s.percent}%`)
    .join(" · ");
}

/** True when two routes split their viewers differently. */
export function sharesDiffer(a: Route, b: Route): boolean {
  return formatShares(a) !== formatShares(b);
}
