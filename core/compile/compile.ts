import type { CompiledMap, MapCanary, Route } from "../contract/compiled-map.js";
import { countriesOf } from "../contract/continents.js";
import { DEFAULT_CC } from "../contract/countries.js";
import { decodeSnapshot } from "../incremental/decode-snapshot.js";
import type { RoutingIndex } from "../incremental/routing-index.js";
import type { Problem } from "../intent/problem.js";
import type { RoutingState, Snapshot } from "../intent/routing-state.js";
import { canaryIntent } from "./canary-intent.js";
import { canaryRoutes } from "./canary-route.js";
import type { CarriedState } from "./carried-state.js";
import type { CompileOptions, CompileResult } from "./compile-options.js";
import { continentRules, unshownContinentRules } from "./continent-rules.js";
import { CountryResolver } from "./country-resolver.js";
import { type FenceCover, fenceCover, fenceProblems, fencesInForce } from "./fences.js";
import { DEFAULT_ROUTES_BUDGET_BYTES, fitProblems, listingProblems } from "./map-budget.js";
import { withoutExpiredOverrides } from "./override-expiry.js";
import { usableRule } from "./rule-route.js";
import { DEFAULT_SHED_RECOVER_SECONDS, poolSheds } from "./shed-share.js";
import { viewerShares, viewerSheds, viewerShedsMember } from "./viewer-sheds.js";

/**
 * Compiles every key under the prefix at one revision into the map stored in KV (docs/reference.md §3).
 * Pure and total: it never throws, always yields a `default` route, and only emits healthy pools
 * (or the floor). A country whose own rule is invalid routes by its last valid rule (carried in
 * the map's `kept`, re-filtered by current health), or falls to `_default` if it never had one.
 */
export function compile(snapshot: Snapshot, opts: CompileOptions): CompileResult {
  return compileState(decodeSnapshot(snapshot, opts.prefix), snapshot.revision, opts);
}

/**
 * {@link compile} of a decoded state (a {@link RoutingIndex}'s, which the pusher keeps up to
 * date key by key) read at etcd revision `revision`, in named steps over `opts.carried`.
 */
export function compileState(
  decoded: RoutingState,
  revision: number,
  opts: CompileOptions,
): CompileResult {
  const { carried } = opts;
  const state = withoutExpiredOverrides(decoded, opts.now);
  const fencing = fencesStep(state, carried, opts.floorPool);
  const shedding = shedStep(state, carried, opts);
  opts.routeMemo?.begin({
    pools: state.pools,
    health: state.health,
    shares: shedding.shares,
    viewerShares: shedding.viewerShares,
    floorPool: opts.floorPool,
    originTemplate: opts.originTemplate,
  });
  const continents = continentStep(state, carried, opts.now);
  const resolver = new CountryResolver({
    state,
    carried,
    settings: opts,
    shares: shedding.shares,
    viewerShares: shedding.viewerShares,
    continentRules: continents.rules,
    continentOverrides: continents.overrides,
    memo: opts.routeMemo,
  });
  const defaultRoute = resolver.defaultRoute();
  const countries = countriesStep(state, fencing.cover, continents, shedding, resolver);
  const kept = { ...resolver.kept, ...unshownContinentRules(continents.rules, countries) };
  const stable: CompiledMap = {
    v: 1,
    rev: revision,
    epoch: state.epoch,
    compiled_at: opts.now.toISOString(),
    default: resolver.carry(defaultRoute, carried?.default),
    countries,
    problems: [],
    history: opts.history ?? 0,
    ...(Object.keys(kept).length > 0 ? { kept } : {}),
    ...(shedding.sheds.size > 0 ? { sheds: Object.fromEntries(shedding.sheds) } : {}),
    ...viewerShedsMember(shedding.viewerSheds),
    ...(fencing.fences.size > 0 ? { fences: Object.fromEntries(fencing.fences) } : {}),
  };
  const canary = canaryStep(state, revision, opts, stable);
  const problems = listingProblems([
    ...fencing.problems,
    ...continents.problems,
    ...resolver.problems,
    ...canary.problems,
  ]);
  const base: CompiledMap = canary.routes ? { ...stable, canary: canary.routes } : stable;
  // Every Worker isolate parses this document: junk under the prefix must not bloat it.
  const budget = opts.routesBudgetBytes ?? DEFAULT_ROUTES_BUDGET_BYTES;
  const map: CompiledMap = { ...base, problems: fitProblems(base, problems, budget) };
  return { map, problems, state, nextShedStepAt: shedding.nextStepAt };
}

/**
 * Step 5: the running canary's routes (§13): its intent compiled under the same health, sheds
 * and fences, and the routes that differ from the stable map's.
 */
function canaryStep(
  state: RoutingState,
  revision: number,
  opts: CompileOptions,
  stable: CompiledMap,
): { routes?: MapCanary; problems: Problem[] } {
  if (!state.canary) return { problems: [] };
  const intent = canaryIntent(state, state.canary);
  if (!intent.ok) return { problems: [intent.problem] };
  // The route memo belongs to the stable intent's index.
  const { routeMemo: _, ...sideOpts } = opts;
  const side = compileState(intent.state, revision, sideOpts).map;
  const routes = canaryRoutes(stable, side, state.canary);
  return routes ? { routes, problems: [] } : { problems: [] };
}

/** Step 1: the fences in force (a damaged value keeps its carried one), who they cover, and their problems. */
function fencesStep(state: RoutingState, carried: CarriedState | null, floorPool: string) {
  const fences = fencesInForce(state, carried);
  const cover = fenceCover(fences);
  const problems: Problem[] = [
    ...state.problems,
    ...cover.problems,
    ...fenceProblems(fences, state, floorPool),
  ];
  return { fences, cover, problems };
}

/**
 * Step 2: each slow pool's shed share (§9), and each country's viewer sheds (§12), stepped from
 * the carried ones.
 */
function shedStep(state: RoutingState, carried: CarriedState | null, opts: CompileOptions) {
  const recoverMs = (opts.shedRecoverSeconds ?? DEFAULT_SHED_RECOVER_SECONDS) * 1000;
  const nowMs = opts.now.getTime();
  const { sheds, nextStepAt } = poolSheds(state, carried, nowMs, recoverMs);
  const shares = new Map([...sheds].map(([pool, s]) => [pool, s.share]));
  const viewers = viewerSheds(state, carried, nowMs, recoverMs);
  const due = [nextStepAt, viewers.nextStepAt].filter((t): t is number => t !== null);
  return {
    sheds,
    shares,
    viewerSheds: viewers.sheds,
    viewerShares: viewerShares(viewers.sheds),
    nextStepAt: due.length > 0 ? Math.min(...due) : null,
  };
}

/** Step 3: each continent's rule (valid now, else its carried last valid one) and live override. */
function continentStep(state: RoutingState, carried: CarriedState | null, now: Date) {
  const problems: Problem[] = [];
  const { rules, overrides } = continentRules(state, carried, now, (key, rule) =>
    usableRule(key, rule, state, problems),
  );
  return { rules, overrides, problems };
}

/** Step 4: every country with a route of its own, resolved (fenced ones inside their fence). */
function countriesStep(
  state: RoutingState,
  cover: FenceCover,
  continents: ReturnType<typeof continentStep>,
  shedding: ReturnType<typeof shedStep>,
  resolver: CountryResolver,
): Record<string, Route> {
  const ccs = new Set<string>([...state.countries.keys(), ...state.overrides.keys()]);
  for (const cc of shedding.viewerSheds.keys()) ccs.add(cc);
  for (const cc of state.invalidCountries) ccs.add(cc);
  for (const cc of state.invalidOverrides) ccs.add(cc);
  for (const k of new Set([...continents.rules.keys(), ...continents.overrides.keys()]))
    for (const cc of countriesOf(k)) ccs.add(cc);
  // A fenced country gets its own entry even when it follows `_default` (a single lookup).
  for (const cc of cover.byCountry.keys()) ccs.add(cc);
  ccs.delete(DEFAULT_CC);
  const countries: Record<string, Route> = {};
  for (const cc of [...ccs].sort()) {
    const fenced = cover.byCountry.get(cc);
    const route = fenced ? resolver.fenced(cc, fenced) : resolver.unfenced(cc);
    if (route) countries[cc] = route;
  }
  return countries;
}
