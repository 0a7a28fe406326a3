import {
  type CompileOptions,
  canaryReport,
  canaryRouteOf,
  compile,
  continentOf,
  DEFAULT_CC,
  describeCanary,
  formatProblem,
  type HealthStatus,
  isContinentCode,
  type KeptRule,
  originFor,
  type PoolReport,
  parseRuleTarget,
  poolInFence,
  poolReport,
  poolReports,
  type Route,
  resolveRoute,
  type Snapshot,
  safeText,
} from "../../core/index.js";
import type { ExplainedRule } from "./explained-rule.js";
import { formatShares, type PoolShare, routeShares } from "./route-shares.js";
import { shedReasons } from "./shed-reasons.js";

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
  readonly rule: ExplainedRule | null;
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
  /** The fence that covers the country (docs/reference.md §10), and the pools it kept out. */
  readonly fence: ExplainedFence | null;
}

/** A fenced country's fence as `explain` shows it. */
export interface ExplainedFence {
  readonly name: string;
  readonly regions: readonly string[];
  readonly floor: string;
  /** Pools that the rules walked for the country name outside the fence: never used for it. */
  readonly removed: readonly string[];
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
  // A fence crossing is about one country: only this one's are shown.
  const concerns = (p: (typeof problems)[number]) =>
    p.code === "fence-crossing" ? p.message.startsWith(`would send ${cc} to pool `) : mine(p.key);
  const relevant = problems.filter(concerns).map(formatProblem);
  for (const p of problems.filter(concerns))
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
          report: reports.get(pool) ?? poolReport(pool, state, map),
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
  const fenceValue = route.fence === undefined ? undefined : map.fences?.[route.fence];
  const removed = new Set<string>();
  if (fenceValue) {
    const crossed = problems.filter((p) => p.code === "fence-crossing" && concerns(p));
    for (const key of [...crossed.map((p) => p.key), ...(ruleKey ? [ruleKey] : [])]) {
      const r = ruleAt(key);
      for (const p of r ? [r.primary, ...r.fallbacks] : [])
        if (!poolInFence(p, fenceValue, state.pools)) removed.add(p);
    }
    reasons.push(
      safeText(
        `fence/${route.fence} holds ${cc} to regions ${fenceValue.regions.join(", ")}${removed.size > 0 ? `: removed ${[...removed].join(", ")}` : ""}`,
      ),
    );
  }
  if (route.degraded === "all-pools-unhealthy" && fenceValue)
    reasons.push(`no pool inside fence ${route.fence} is left: the fence's floor ${route.pool}`);
  else if (route.degraded === "all-pools-unhealthy")
    reasons.push(`every pool of the chain is unhealthy: floor pool ${route.pool}`);
  if (route.degraded === "fence-unsatisfiable")
    reasons.push(`no pool lies inside fence ${route.fence}: the edge answers 503`);
  if (route.degraded === "no-default-rule")
    reasons.push(`no usable country/_default rule: floor pool ${route.pool}`);
  reasons.push(...shedReasons(route, reports, state.observed.get(cc)));
  const canaryRoute = cc === DEFAULT_CC ? map.canary?.default : canaryRouteOf(map, cc);
  const canary = canaryReport(state.canary, state.canaryJudgement, opts.now.getTime());
  if (canaryRoute && canary)
    reasons.push(
      `${describeCanary(canary)}: its viewers of this route go to ${canaryRoute.pool} (${canaryRoute.source})`,
    );

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
    fence:
      fenceValue && route.fence !== undefined
        ? {
            name: route.fence,
            regions: [...fenceValue.regions],
            floor: fenceValue.floor,
            removed: [...removed],
          }
        : null,
  };
}
