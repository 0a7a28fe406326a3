import type { ChainLink, CompiledMap, DegradedReason, Route } from "./compiled-map.js";
import { DEFAULT_CC } from "./countries.js";
import { withoutExpiredOverrides } from "./override-expiry.js";
import { formatProblem, type Problem } from "./problem.js";
import type { CountryRule } from "./schema.js";
import { type RoutingState, readSnapshot, type Snapshot } from "./snapshot.js";

/** Settings shared by the pusher, the CLI and the Worker. */
export interface CompileOptions {
  readonly prefix: string;
  /** Pool used when nothing healthy is left (`FLOOR_POOL`). */
  readonly floorPool: string;
  /** Origin for pools without a `pool/` definition, with `{pool}` (`ORIGIN_TEMPLATE`). */
  readonly originTemplate: string;
  readonly now: Date;
  /** The last compiled map: countries whose rule turned invalid keep their route from it. */
  readonly previous?: CompiledMap | null;
  /** The etcd history the snapshot belongs to (`CompiledMap.history`); 0 by default. */
  readonly history?: number;
}

/** The compiled map plus the structured problems behind its `problems` strings. */
export interface CompileResult {
  readonly map: CompiledMap;
  readonly problems: readonly Problem[];
  readonly state: RoutingState;
}

/** Most problems listed in a compiled map; the rest are counted in a last entry. */
export const MAX_MAP_PROBLEMS = 1000;

/** Default `FLOOR_POOL`. */
export const DEFAULT_FLOOR_POOL = "par-1";
/** Default `ORIGIN_TEMPLATE`. */
export const DEFAULT_ORIGIN_TEMPLATE = "https://{pool}.origin.example.com";

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

function routeFromChain(
  pools: readonly string[],
  source: string,
  state: RoutingState,
  opts: CompileOptions,
): Route {
  const chain: ChainLink[] = pools
    .filter((p) => state.pools.has(p) && state.health.get(p)?.status === "healthy")
    .map((pool) => ({ pool, origin: originFor(pool, state, opts.originTemplate) }));
  const first = chain[0];
  if (!first) return floorRoute(state, opts, "all-pools-unhealthy");
  return { pool: first.pool, origin: first.origin, chain, source, degraded: null };
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
  problems.push({
    key,
    code: "dangling-reference",
    message: `names undefined pool${missing.length > 1 ? "s" : ""} ${missing.map((p) => `"${p}"`).join(", ")}`,
  });
  return undefined;
}

/** Last known good: the previous route with its chain re-filtered by current health. */
function keptRoute(prev: Route, state: RoutingState, opts: CompileOptions): Route {
  if (prev.source === "floor")
    return floorRoute(state, opts, prev.degraded ?? "all-pools-unhealthy");
  return routeFromChain(
    prev.chain.map((c) => c.pool),
    prev.source,
    state,
    opts,
  );
}

/**
 * Compiles every key under the prefix at one revision into the map stored in KV (SPEC §3).
 * Pure and total: it never throws, always yields a `default` route, and only emits healthy pools
 * (or the floor). An invalid country rule keeps its previous route, or falls to `_default`.
 */
export function compile(snapshot: Snapshot, opts: CompileOptions): CompileResult {
  const state = withoutExpiredOverrides(readSnapshot(snapshot, opts.prefix), opts.now);
  const problems: Problem[] = [...state.problems];
  const prev = opts.previous ?? null;

  const resolve = (cc: string): Route | undefined => {
    const override = usableRule(`override/${cc}`, state.overrides.get(cc), state, problems);
    if (override)
      return routeFromChain(
        [override.primary, ...override.fallbacks],
        `override/${cc}`,
        state,
        opts,
      );
    const rule = usableRule(`country/${cc}`, state.countries.get(cc), state, problems);
    if (rule)
      return routeFromChain([rule.primary, ...rule.fallbacks], `country/${cc}`, state, opts);
    const hadRule = state.countries.has(cc) || state.invalidCountries.has(cc);
    if (!hadRule) return undefined;
    const last = cc === DEFAULT_CC ? prev?.default : prev?.countries[cc];
    return last && last.source !== `override/${cc}` ? keptRoute(last, state, opts) : undefined;
  };

  const defaultRoute = resolve(DEFAULT_CC) ?? floorRoute(state, opts, "no-default-rule");
  const ccs = new Set<string>([...state.countries.keys(), ...state.overrides.keys()]);
  for (const cc of state.invalidCountries) ccs.add(cc);
  for (const cc of state.invalidOverrides) ccs.add(cc);
  ccs.delete(DEFAULT_CC);

  const countries: Record<string, Route> = {};
  for (const cc of [...ccs].sort()) {
    const route = resolve(cc);
    if (route) countries[cc] = route;
  }

  const sorted = problems.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const listed = sorted.map(formatProblem);
  // Every Worker isolate parses this document: a flood of junk keys must not bloat it.
  if (listed.length > MAX_MAP_PROBLEMS) {
    const more = listed.length - (MAX_MAP_PROBLEMS - 1);
    listed.splice(MAX_MAP_PROBLEMS - 1, listed.length, `… and ${more} more problems`);
  }
  const map: CompiledMap = {
    v: 1,
    rev: snapshot.revision,
    epoch: state.epoch,
    compiled_at: opts.now.toISOString(),
    default: defaultRoute,
    countries,
    problems: listed,
    history: opts.history ?? 0,
  };
  return { map, problems: sorted, state };
}
