import { type PoolReport, safeText } from "../../core/index.js";
import type { PoolViewers } from "../explain/country-viewers.js";
import type { ContinentExplanation } from "../explain/explain-continent.js";
import type { Explanation } from "../explain/explain-country.js";

/** `explain CC` as text: the route, the chain as the compiler saw it, and why. */
export function formatExplanation(x: Explanation, viewers: readonly PoolViewers[] = []): string[] {
  const lines = [
    `${x.country} at revision ${x.revision} (epoch ${x.epoch})`,
    `rule:   ${x.ruleKey ?? "(none)"}${x.rule ? ` primary ${x.rule.primary}, fallbacks [${x.rule.fallbacks.join(", ")}]` : ""}`,
    "chain:",
    ...x.chain.map(
      (l, i) =>
        `  ${i + 1}. ${l.pool.padEnd(12)} ${(l.defined ? l.health : "undefined pool").padEnd(10)} ${l.takesTraffic ? "takes traffic" : "skipped"}${linkDetail(l.report)}`,
    ),
    `chosen: ${x.route.pool} ${x.route.origin} (source ${x.route.source}${x.route.degraded ? `, degraded: ${x.route.degraded}` : ""})`,
    `failover chain: ${x.route.chain.map((c) => c.pool).join(" > ")}`,
    ...(x.route.shed
      ? [`shed:   ${x.route.shed.map((s) => `${s.pool} ${s.share}%`).join(" · ")}`]
      : []),
    `source: ${x.source}`,
    `split:  ${x.split.map((s) => `${s.pool} ${s.percent}%`).join(" · ")}`,
    ...(x.fence
      ? [
          safeText(
            `fence:  ${x.fence.name} (regions ${x.fence.regions.join(", ")}; floor ${x.fence.floor}; removed ${x.fence.removed.length > 0 ? x.fence.removed.join(", ") : "none"})`,
          ),
        ]
      : []),
    ...(x.route.attrs
      ? [
          `attrs:  ${Object.entries(x.route.attrs)
            .map(([name, value]) => `${name}=${value}`)
            .join(" · ")}`,
        ]
      : []),
    ...viewersLines(viewers),
    "why:",
    ...x.reasons.map((r) => `  - ${r}`),
  ];
  if (x.chain.length === 0) lines.splice(3, 0, "  (no rule walked)");
  return lines;
}

/** Human-readable rendering of a continent explanation. */
export function formatContinentExplanation(x: ContinentExplanation): string[] {
  const list = (ccs: readonly string[]) => (ccs.length > 0 ? ccs.join(" ") : "(none)");
  return [
    `continent ${x.continent} at revision ${x.revision} (epoch ${x.epoch})`,
    `rule:   ${x.ruleKey ?? "(none)"}${x.rule ? ` primary ${x.rule.primary}, fallbacks [${x.rule.fallbacks.join(", ")}]` : ""}`,
    ...(x.route
      ? [
          `chosen: ${x.route.pool} ${x.route.origin} (source ${x.route.source}${x.route.degraded ? `, degraded: ${x.route.degraded}` : ""})`,
          `failover chain: ${x.route.chain.map((c) => c.pool).join(" > ")}`,
          `split:  ${x.split.map((s) => `${s.pool} ${s.percent}%`).join(" · ")}`,
        ]
      : []),
    `covers (${x.covers.length}): ${list(x.covers)}`,
    `own rule (${x.ownRule.length}): ${list(x.ownRule)}`,
    `follow _default (${x.followsDefault.length}): ${list(x.followsDefault)}`,
    "why:",
    ...x.reasons.map((r) => `  - ${r}`),
  ];
}

/** `  (3/3 checkers, p90 1400 ms, slow 800/2000 ms, sheds 50 %)` after a chain line. */
function linkDetail(r: PoolReport): string {
  const parts: string[] = [];
  if (r.live_checkers > 1) parts.push(`${r.healthy_checkers}/${r.live_checkers} checkers healthy`);
  if (r.p90_ms !== null) parts.push(`p90 ${r.p90_ms} ms`);
  if (r.slow_ms) parts.push(`slow ${r.slow_ms.low}/${r.slow_ms.high} ms`);
  if (r.shed > 0) parts.push(`sheds ${r.shed} %`);
  return parts.length > 0 ? `  (${parts.join(", ")})` : "";
}

/** `viewers:` and a line per pool its viewers reach (observed/CC/POOL); nothing without any. */
function viewersLines(viewers: readonly PoolViewers[]): string[] {
  if (viewers.length === 0) return [];
  return [
    "viewers:",
    ...viewers.map(
      (v) =>
        `  ${safeText(v.pool, 63).padEnd(12)} p90 ${v.p90_ms} ms over ${v.samples} requests, errors ${(v.error_ratio * 100).toFixed(1)} %${v.checkers_p90_ms !== null ? ` (checkers p90 ${v.checkers_p90_ms} ms)` : ""}`,
    ),
  ];
}
