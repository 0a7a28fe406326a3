import {
  type CompileOptions,
  compile,
  continentOf,
  DEFAULT_CC,
  formatProblem,
  type HealthStatus,
  isContinentCode,
  type KeptRule,
  originFor,
  type PoolReport,
  parseRuleTarget,
  poolReports,
  type Route,
  resolveRoute,
  type Snapshot,
  safeText,
} from "../../core/index.js";
import { formatShares, type PoolShare, routeShares } from "../apply/route-shares.js";

/** One pool of the rule's chain, with what the compiler saw for it. */
export interface ExplainedLink {
  readonly pool: string;
  readonly defined: boolean;
  /** `missing` when there is no (valid) `health/` key: the lease expired, so unhealthy. */
  readonly health: HealthStatus | "missing";
  readonly origin: string;
  readonly takesTraffic: boolean;
  /** Its checkers, latency and shed (docs/reference.md §9). */
  readonly report: PoolReport;
}

/** Why a country routes where it does: the `edgectl explain` answer. */
export interface Explanation {
  readonly country: string;
  readonly revision: number;
  readonly epoch: number;
  /** The key whose rule was walked (`override/DE`, `country/DE`, `country/_default`), or null. */
  readonly ruleKey: string | null;
  readonly rule: {
    readonly primary: string;
    readonly fallbacks: readonly string[];
    readonly reason?: string;
  } | null;
  readonly chain: readonly ExplainedLink[];
  /** Exactly the compiled route (`countries[CC] ?? default`). */
  readonly route: Route;
  readonly reasons: readonly string[];
  /** Compile problems about this country's keys. */
  readonly problems: readonly string[];
  /** The key that decided (`country/DE`, `continent/EU`, `override/EU`, `floor`): the route's source. */
  readonly source: string;
  /** Shares of viewers per pool: the weighted split, else 100 % on the route's pool. */
  readonly split: readonly PoolShare[];
}

/**
 * True when a rule `cc` may depend on is invalid. The pusher then routes it by its last valid
 * rule, which only the previous map (in KV) knows, so an explanation needs that map too.
 */
export function dependsOnLastGood(snapshot: Snapshot, cc: string, opts: CompileOptions): boolean {
  const keys = new Set([`country/${cc}`, `country/${DEFAULT_CC}`]);
  return compile(snapshot, opts).problems.some((p) => keys.has(p.key));
}

/**
 * Compiles the snapshot exactly as the pusher does (with `opts.previous`, the map in KV, for last
 * known good) and explains one country's route. The route comes from the compiled map itself;
 * the rule and chain are the explanation around it. `history` says where `previous` came from.
 */
export function explainCountry(
  snapshot: Snapshot,
  cc: string,
  opts: CompileOptions,
  history?: string,
): Explanation {
  const { map, problems, state } = compile(snapshot, opts);
  const route = cc === DEFAULT_CC ? map.default : resolveRoute(map, cc);
  const own = cc === DEFAULT_CC || Object.hasOwn(map.countries, cc);
  const reasons: string[] = history ? [history] : [];
  const k = continentOf(cc);
  const continentKeys = k ? [`continent/${k}`, `override/${k}`, `override/continent/${k}`] : [];
  const mine = (key: string) =>
    key === `override/${cc}` || key === `country/${cc}` || continentKeys.includes(key);
  const relevant = problems.filter((p) => mine(p.key)).map(formatProblem);
  for (const p of problems.filter((p) => mine(p.key)))
    reasons.push(safeText(`${p.key} is not usable (${p.message}): ignored`));

  const defined = (r: KeptRule) => [r.primary, ...r.fallbacks].every((p) => state.pools.has(p));
  const kept = (target: string) =>
    map.kept && Object.hasOwn(map.kept, target) ? map.kept[target] : undefined;
  const validOwn = (target: string) => {
    const r = state.countries.get(target);
    return r && defined(r) ? r : undefined;
  };
  /** The rule the compiler walks for a key: a usable one, or a country's last valid rule. */
  const ruleAt = (
    key: string,
  ): (KeptRule & { readonly reason?: string | undefined }) | undefined => {
    const target = key.slice(key.indexOf("/") + 1);
    const continent = key.startsWith("override/") ? parseRuleTarget(target) : undefined;
    if (continent?.kind === "continent") {
      const o = state.continentOverrides.get(continent.continent);
      return o && defined(o.rule) ? o.rule : undefined;
    }
    if (key.startsWith("continent/") && isContinentCode(target)) {
      const r = state.continents.get(target);
      return r && defined(r) ? r : kept(key);
    }
    if (key.startsWith("override/")) {
      const o = state.overrides.get(target);
      return o && defined(o) ? o : undefined;
    }
    return validOwn(target) ?? kept(target);
  };

  let ruleKey: string | null = null;
  if (/^(override|country|continent)\//.test(route.source)) ruleKey = route.source;
  else {
    // floor: show the rule that was walked and found no healthy pool, if any
    const target = own ? cc : DEFAULT_CC;
    const viaContinent =
      own && k ? [state.continentOverrides.get(k)?.key ?? "", `continent/${k}`] : [];
    ruleKey =
      [`override/${target}`, `country/${target}`, ...viaContinent].find(
        (key) => key && ruleAt(key),
      ) ?? null;
  }
  const ruleCc = ruleKey ? ruleKey.slice(ruleKey.indexOf("/") + 1) : null;
  const rule = ruleKey ? (ruleAt(ruleKey) ?? null) : null;

  if (cc !== DEFAULT_CC && !own)
    reasons.push(`no usable country/${cc} or override/${cc}: ${cc} follows _default`);
  if (ruleKey?.startsWith("continent/"))
    reasons.push(`${cc} has no usable rule of its own: ${ruleKey} covers its continent`);
  if (ruleKey?.startsWith("override/")) {
    const o = state.overrides.get(ruleCc ?? "") ?? rule ?? undefined;
    reasons.push(
      `${ruleKey} is active${o?.reason ? ` (reason: ${safeText(o.reason, 80)})` : ""} and replaces ${parseRuleTarget(ruleCc ?? "")?.kind === "continent" ? "continent" : "country"}/${ruleCc?.replace("continent/", "")}`,
    );
  }
  if (ruleKey?.startsWith("country/") && ruleCc && !validOwn(ruleCc) && rule)
    reasons.push(
      `${ruleKey} is invalid: routing by its last valid rule (kept in the map), re-filtered by current health`,
    );

  const reports = new Map(poolReports(state, map).map((r) => [r.pool, r]));
  const chain: ExplainedLink[] = rule
    ? [rule.primary, ...rule.fallbacks].map((pool) => {
        const health = state.health.get(pool)?.status ?? "missing";
        const defined = state.pools.has(pool);
        return {
          pool,
          defined,
          health,
          origin: originFor(pool, state, opts.originTemplate),
          takesTraffic: defined && health === "healthy",
          report: reports.get(pool) ?? emptyReport(pool),
        };
      })
    : [];
  for (const link of chain) {
    if (link.pool === route.pool && route.source !== "floor") {
      reasons.push(`${link.pool} is the first healthy pool of ${ruleKey}`);
      break;
    }
    reasons.push(
      `${link.pool} skipped: ${link.health === "missing" ? "no health key (lease expired): unhealthy" : link.health}`,
    );
  }
  if (route.weights)
    reasons.push(
      `weighted split over the healthy weighted pools: ${formatShares(route)} of viewers (rendezvous hash of the viewer key; the rest of the chain is the failover order)`,
    );
  if (route.degraded === "all-pools-unhealthy")
    reasons.push(`every pool of the chain is unhealthy: floor pool ${route.pool}`);
  if (route.degraded === "no-default-rule")
    reasons.push(`no usable country/_default rule: floor pool ${route.pool}`);
  reasons.push(...shedReasons(route, reports));

  return {
    country: cc,
    revision: snapshot.revision,
    epoch: state.epoch,
    ruleKey,
    rule: rule
      ? {
          primary: rule.primary,
          fallbacks: [...rule.fallbacks],
          ...(typeof rule.reason === "string" ? { reason: safeText(rule.reason, 80) } : {}),
        }
      : null,
    chain,
    route,
    reasons,
    problems: relevant,
    source: route.source,
    split: routeShares(route),
  };
}

function emptyReport(pool: string): PoolReport {
  return {
    pool,
    status: "missing",
    p90_ms: null,
    live_checkers: 0,
    healthy_checkers: 0,
    quorum: null,
    slow_ms: null,
    shed: 0,
  };
}

/** `p90 1400 ms (median of 3 healthy checkers), watermarks 800/2000 ms`. */
function latencyText(r: PoolReport): string {
  const p90 =
    r.p90_ms === null
      ? "no p90 published"
      : `p90 ${r.p90_ms} ms (median of ${r.healthy_checkers} healthy checker${r.healthy_checkers === 1 ? "" : "s"})`;
  return r.slow_ms ? `${p90}, watermarks ${r.slow_ms.low}/${r.slow_ms.high} ms` : p90;
}

/** Why a route sheds (or is all-pools-slow): each slow pool, its share, where its viewers went. */
function shedReasons(route: Route, reports: ReadonlyMap<string, PoolReport>): string[] {
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

/** Human-readable rendering of an explanation. */
export function formatExplanation(x: Explanation): string[] {
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
    "why:",
    ...x.reasons.map((r) => `  - ${r}`),
  ];
  if (x.chain.length === 0) lines.splice(3, 0, "  (no rule walked)");
  return lines;
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
