import type { Observed, PoolReport, Route, RouteShed } from "../../core/index.js";
import { formatShares } from "./route-shares.js";

/** `p90 1400 ms (median of 3 healthy checkers), watermarks 800/2000 ms`. */
function latencyText(r: PoolReport): string {
  const p90 =
    r.p90_ms === null
      ? "no p90 published"
      : `p90 ${r.p90_ms} ms (median of ${r.healthy_checkers} healthy checker${r.healthy_checkers === 1 ? "" : "s"})`;
  return r.slow_ms ? `${p90}, watermarks ${r.slow_ms.low}/${r.slow_ms.high} ms` : p90;
}

/**
 * `is slow for this country's viewers: p90 2400 ms over 180 requests, watermarks 800/2000 ms`, or,
 * once the observation has aged out, why the shed steps down (docs/reference.md §12).
 */
function viewersText(r: PoolReport | undefined, seen: Observed | undefined): string {
  const marks = r?.slow_ms ? `, watermarks ${r.slow_ms.low}/${r.slow_ms.high} ms` : "";
  if (!seen)
    return `was slow for this country's viewers; too few of them are left on it to judge it now (no observation)${marks}: the shed steps down one step per recover period`;
  const errors =
    seen.error_ratio > 0 ? `, ${Math.round(seen.error_ratio * 1000) / 10} % errors` : "";
  return `is slow for this country's viewers: p90 ${Math.round(seen.p90_ms)} ms over ${seen.samples} requests${errors}${marks}`;
}

/** `fra-1 is slow: …` or `fra-1 is slow for this country's viewers: …`, for one shed pool. */
function slowText(
  s: RouteShed,
  r: PoolReport | undefined,
  observed: ReadonlyMap<string, Observed> | undefined,
): string {
  if (s.by === "viewers")
    return `${s.pool} ${viewersText(r, observed?.get(s.pool))}: shed by viewers`;
  return `${s.pool} is slow: ${r ? latencyText(r) : "no report"}`;
}

/**
 * Why a route sheds (or is all-pools-slow): each slow pool, its share, where its viewers went.
 * `observed` is the country's own viewers' observations by pool, for a shed by viewers (§12).
 */
export function shedReasons(
  route: Route,
  reports: ReadonlyMap<string, PoolReport>,
  observed?: ReadonlyMap<string, Observed>,
): string[] {
  const out: string[] = [];
  const pools = route.chain.map((c) => c.pool);
  for (const s of route.shed ?? []) {
    const r = reports.get(s.pool);
    const after = pools.slice(pools.indexOf(s.pool) + 1);
    const to = (route.weights ?? []).filter((w) => after.includes(w.pool)).map((w) => w.pool);
    const whose = s.by === "viewers" ? "this country's viewers of it" : "its viewers";
    out.push(
      `${slowText(s, r, observed)}: sheds ${s.share} % of ${whose}${to.length > 0 ? ` to ${to.join(", ")} (the next pools of the chain)` : ""}; split now ${formatShares(route)} (each viewer sticky)`,
    );
  }
  if (route.degraded === "all-pools-slow") {
    const slow = pools.map((p) => {
      const r = reports.get(p);
      const seen = observed?.get(p);
      const viewers = seen ? `, this country's viewers see p90 ${Math.round(seen.p90_ms)} ms` : "";
      return `${p} ${r ? latencyText(r) : "no report"}${viewers}`;
    });
    out.push(
      `every pool of the chain is fully shed (${slow.join("; ")}): nothing is shed, the route keeps its chain`,
    );
  }
  return out;
}
