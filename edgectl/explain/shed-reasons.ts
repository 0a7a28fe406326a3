import type { PoolReport, Route } from "../../core/index.js";
import { formatShares } from "../apply/route-shares.js";

/** `p90 1400 ms (median of 3 healthy checkers), watermarks 800/2000 ms`. */
function latencyText(r: PoolReport): string {
  const p90 =
    r.p90_ms === null
      ? "no p90 published"
      : `p90 ${r.p90_ms} ms (median of ${r.healthy_checkers} healthy checker${r.healthy_checkers === 1 ? "" : "s"})`;
  return r.slow_ms ? `${p90}, watermarks ${r.slow_ms.low}/${r.slow_ms.high} ms` : p90;
}

/** Why a route sheds (or is all-pools-slow): each slow pool, its share, where its viewers went. */
export function shedReasons(route: Route, reports: ReadonlyMap<string, PoolReport>): string[] {
  const out: string[] = [];
  const pools = route.chain.map((c) => c.pool);
  for (const s of route.shed ?? []) {
    const r = reports.get(s.pool);
    const after = pools.slice(pools.indexOf(s.pool) + 1);
    const to = (route.weights ?? []).filter((w) => after.includes(w.pool)).map((w) => w.pool);
    out.push(
      `${s.pool} is slow: ${r ? latencyText(r) : "no report"}: sheds ${s.share} % of its viewers${to.length > 0 ? ` to ${to.join(", ")} (the next pools of the chain)` : ""}; split now ${formatShares(route)} (each viewer sticky)`,
    );
  }
  if (route.degraded === "all-pools-slow") {
    const slow = pools.map((p) => {
      const r = reports.get(p);
      return `${p} ${r ? latencyText(r) : "no report"}`;
    });
    out.push(
      `every pool of the chain is fully shed (${slow.join("; ")}): nothing is shed, the route keeps its chain`,
    );
  }
  return out;
}
