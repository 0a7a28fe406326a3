import type {
  ChainLink,
  CompiledMap,
  DegradedReason,
  KeptRule,
  PoolShed,
  Route,
} from "./compiled-map.js";
import { continentRules } from "./continent-rules.js";
import { continentOf, countriesOf } from "./continents.js";
import { DEFAULT_CC } from "./countries.js";
import { lastValidRule, routeShowsRule, routeShowsRuleOf, rulePools } from "./last-valid-rule.js";
import { compareProblems, DEFAULT_ROUTES_BUDGET_BYTES, fitProblems } from "./map-budget.js";
import { withoutExpiredOverrides } from "./override-expiry.js";
import { type Problem, problem } from "./problem.js";
import { shedRoute } from "./route-shed.js";
import type { RoutingIndex } from "./routing-index.js";
import { positiveWeights } from "./rule-weights.js";
import type { CountryRule } from "./schema.js";
import { DEFAULT_SHED_RECOVER_SECONDS, poolSheds } from "./shed-share.js";
import { type RoutingState, readSnapshot, type Snapshot } from "./snapshot.js";

/** Settings shared by the pusher, the CLI and the Worker. */
export interface CompileOptions {
  readonly prefix: string;
  /** Pool used when nothing healthy is left (`FLOOR_POOL`). */
  readonly floorPool: string;
  /** Origin for pools without a `pool/` definition, with `{pool}` (`ORIGIN_TEMPLATE`). */
  readonly originTemplate: string;
  readonly now: Date;
  /**
   * The last compiled map (after a restart: the one read back from KV). A country whose rule
   * turned invalid routes by the last valid rule it carries.
   */
  readonly previous?: CompiledMap | null;
  /** The etcd history the snapshot belongs to (`CompiledMap.history`); 0 by default. */
  readonly history?: number;
  /** Byte budget of the `routes` document; junk problems are summarised to fit. 1 MiB by default. */
  readonly routesBudgetBytes?: number;
  /** How long a shed share holds before it falls one step (`SHED_RECOVER_SECONDS`); 60 by default. */
  readonly shedRecoverSeconds?: number;
}

/** The compiled map plus the structured problems behind its `problems` strings. */
export interface CompileResult {
  readonly map: CompiledMap;
  readonly problems: readonly Problem[];
  readonly state: RoutingState;
  /**
   * When (ms since the epoch) a shed share may next step down with no etcd change: the pusher
   * compiles again then. `null` when no share is falling.
   */
  readonly nextShedStepAt: number | null;
}

/** The origin of a pool: its `pool/` definition, else the template. */
export function originFor(
  pool: string,
  state: Pick<RoutingState, "pools">,
  originTemplate: string,
): string {
  return (
    state.pools.get(pool)?.origin.replace(/\/$/, "") ?? originTemplate.replaceAll("{pool}", pool)
  );
}

function danglingPools(rule: CountryRule, state: RoutingState): string[] {
  return [rule.primary, ...rule.fallbacks].filter((p) => !state.pools.has(p));
}

function floorRoute(state: RoutingState, opts: CompileOptions, degraded: DegradedReason): Route {
  const origin = originFor(opts.floorPool, state, opts.originTemplate);
  return {
    pool: opts.floorPool,
    origin,
    chain: [{ pool: opts.floorPool, origin }],
    source: "floor",
    degraded,
  };
}

/** The route of a rule: its healthy chain, and its weights over the healthy weighted pools. */
function routeFromRule(
  rule: KeptRule,
  source: string,
  state: RoutingState,
  opts: CompileOptions,
  shares: ReadonlyMap<string, number>,
): Route {
  const healthy = (p: string) => state.pools.has(p) && state.health.get(p)?.status === "healthy";
  const chain: ChainLink[] = rulePools(rule)
    .filter(healthy)
    .map((pool) => ({ pool, origin: originFor(pool, state, opts.originTemplate) }));
  const first = chain[0];
  if (!first) return floorRoute(state, opts, "all-pools-unhealthy");
  const weights = positiveWeights(rule).filter((w) => healthy(w.pool));
  const route: Route = { pool: first.pool, origin: first.origin, chain, source, degraded: null };
  return shedRoute(weights.length > 0 ? { ...route, weights } : route, shares);
}

/** A kept rule as the map stores it: weights only when the rule has them. */
function keptOf(rule: CountryRule): KeptRule {
  const base = { primary: rule.primary, fallbacks: [...rule.fallbacks] };
  return rule.weights ? { ...base, weights: { ...rule.weights } } : base;
}

/** A rule is usable when every pool it names is defined. */
function usableRule(
  key: string,
  rule: CountryRule | undefined,
  state: RoutingState,
  problems: Problem[],
): CountryRule | undefined {
  if (!rule) return undefined;
  const missing = danglingPools(rule, state);
  if (missing.length === 0) return rule;
  // The names passed the schema's DNS-label check: safe to show, and what the operator needs.
  const named = missing.slice(0, 3).map((p) => `"${p}"`);
  if (missing.length > 3) named.push(`${missing.length - 3} more`);
  const s = missing.length > 1 ? "s" : "";
  problems.push(problem(key, "dangling-reference", `names undefined pool${s} ${named.join(", ")}`));
  return undefined;
}

/**
 * Compiles every key under the prefix at one revision into the map stored in KV (SPEC §3).
 * Pure and total: it never throws, always yields a `default` route, and only emits healthy pools
 * (or the floor). A country whose own rule is invalid routes by its last valid rule (carried in
 * the map's `kept`, re-filtered by current health), or falls to `_default` if it never had one.
 */
export function compile(snapshot: Snapshot, opts: CompileOptions): CompileResult {
  return compileState(readSnapshot(snapshot, opts.prefix), snapshot.revision, opts);
}

/**
 * {@link compile} of a decoded state (a {@link RoutingIndex}'s, which the pusher keeps up to
 * date key by key) read at etcd revision `revision`.
 */
export function compileState(
  decoded: RoutingState,
  revision: number,
  opts: CompileOptions,
): CompileResult {
  const state = withoutExpiredOverrides(decoded, opts.now);
  const problems: Problem[] = [...state.problems];
  const prev = opts.previous ?? null;
  const kept: Record<string, KeptRule> = {};
  const recoverMs = (opts.shedRecoverSeconds ?? DEFAULT_SHED_RECOVER_SECONDS) * 1000;
  const { sheds, nextStepAt } = poolSheds(state, prev, opts.now.getTime(), recoverMs);
  const shares = new Map([...sheds].map(([pool, s]) => [pool, s.share]));
  const fromRule = (rule: KeptRule, source: string) =>
    routeFromRule(rule, source, state, opts, shares);

  /** The own rule: valid now, else the last valid one while the (invalid) key exists. */
  const ownRule = (cc: string): { rule: CountryRule; valid: boolean } | undefined => {
    const rule = usableRule(`country/${cc}`, state.countries.get(cc), state, problems);
    if (rule) return { rule, valid: true };
    if (!state.countries.has(cc) && !state.invalidCountries.has(cc)) return undefined;
    const last = lastValidRule(prev, cc);
    return last ? { rule: last, valid: false } : undefined;
  };

  const { rules: continentRule, overrides: continentOverride } = continentRules(
    state,
    prev,
    opts.now,
    (key, rule) => usableRule(key, rule, state, problems),
  );

  /** SPEC §3.1: override/CC → country/CC → override/K → continent/K (→ default, by the caller). */
  const resolve = (cc: string): Route | undefined => {
    const own = ownRule(cc);
    const override = usableRule(`override/${cc}`, state.overrides.get(cc), state, problems);
    const k = continentOf(cc);
    const viaContinent = (): Route | undefined => {
      if (!k) return undefined;
      const o = continentOverride.get(k);
      if (o) return fromRule(o.rule, o.key);
      const c = continentRule.get(k);
      return c ? fromRule(c.rule, `continent/${k}`) : undefined;
    };
    const route = override
      ? fromRule(override, `override/${cc}`)
      : own
        ? fromRule(own.rule, `country/${cc}`)
        : viaContinent();
    // Kept whenever the route does not show the rule whole, so the next compile still has it.
    if (own && !(own.valid && route && routeShowsRule(route, own.rule, cc)))
      kept[cc] = keptOf(own.rule);
    return route;
  };

  const defaultRoute = resolve(DEFAULT_CC) ?? floorRoute(state, opts, "no-default-rule");
  const ccs = new Set<string>([...state.countries.keys(), ...state.overrides.keys()]);
  for (const cc of state.invalidCountries) ccs.add(cc);
  for (const cc of state.invalidOverrides) ccs.add(cc);
  for (const k of new Set([...continentRule.keys(), ...continentOverride.keys()]))
    for (const cc of countriesOf(k)) ccs.add(cc);
  ccs.delete(DEFAULT_CC);

  const countries: Record<string, Route> = {};
  for (const cc of [...ccs].sort()) {
    const route = resolve(cc);
    if (route) countries[cc] = route;
  }
  // A continent rule no country shows whole (hidden, invalid, unhealthy pools) is kept too.
  for (const [k, c] of continentRule) {
    const source = `continent/${k}`;
    const shown =
      c.valid &&
      countriesOf(k).some((cc) => {
        const r = countries[cc];
        return r !== undefined && routeShowsRuleOf(r, c.rule, source);
      });
    if (!shown) kept[source] = keptOf(c.rule);
  }

  const sorted = problems.sort(compareProblems);
  const base: CompiledMap = {
    v: 1,
    rev: revision,
    epoch: state.epoch,
    compiled_at: opts.now.toISOString(),
    default: defaultRoute,
    countries,
    problems: [],
    history: opts.history ?? 0,
    ...(Object.keys(kept).length > 0 ? { kept } : {}),
    ...(sheds.size > 0 ? { sheds: shedsRecord(sheds) } : {}),
  };
  // Every Worker isolate parses this document: junk under the prefix must not bloat it.
  const budget = opts.routesBudgetBytes ?? DEFAULT_ROUTES_BUDGET_BYTES;
  const map: CompiledMap = { ...base, problems: fitProblems(base, sorted, budget) };
  return { map, problems: sorted, state, nextShedStepAt: nextStepAt };
}

function shedsRecord(sheds: ReadonlyMap<string, PoolShed>): Record<string, PoolShed> {
  const out: Record<string, PoolShed> = {};
  for (const [pool, s] of sheds) out[pool] = s;
  return out;
}
