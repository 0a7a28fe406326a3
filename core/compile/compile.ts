import type { CompiledMap, KeptRule, Route } from "../contract/compiled-map.js";
import { continentOf, countriesOf } from "../contract/continents.js";
import { DEFAULT_CC } from "../contract/countries.js";
import { mergeAttrs } from "../contract/market-attrs.js";
import { countryInputsOf } from "../incremental/country-inputs.js";
import { readSnapshot } from "../incremental/read-snapshot.js";
import type { RoutingIndex } from "../incremental/routing-index.js";
import type { Problem } from "../intent/problem.js";
import type { RoutingState, Snapshot } from "../intent/routing-state.js";
import type { CountryRule } from "../intent/schema.js";
import type { CompileOptions, CompileResult } from "./compile-options.js";
import { continentRules, unshownContinentRules } from "./continent-rules.js";
import {
  type FenceOf,
  fenceCover,
  fenceCrossing,
  fenceProblems,
  fenceRoute,
  fencesInForce,
} from "./fences.js";
import { lastValidRule, routeShowsRule } from "./last-valid-rule.js";
import { DEFAULT_ROUTES_BUDGET_BYTES, fitProblems, listingProblems } from "./map-budget.js";
import { withoutExpiredOverrides } from "./override-expiry.js";
import { carriedRoute } from "./route-carry-over.js";
import {
  floorRoute,
  keptOf,
  originFor,
  routeFromRule,
  usableRule,
  withAttrs,
} from "./rule-route.js";
import { DEFAULT_SHED_RECOVER_SECONDS, poolSheds } from "./shed-share.js";

/**
 * Compiles every key under the prefix at one revision into the map stored in KV (docs/reference.md §3).
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
  const prev = opts.previous ?? null;
  const fences = fencesInForce(state, prev);
  const cover = fenceCover(fences);
  const problems: Problem[] = [
    ...state.problems,
    ...cover.problems,
    ...fenceProblems(fences, state, opts.floorPool),
  ];
  const kept: Record<string, KeptRule> = {};
  const recoverMs = (opts.shedRecoverSeconds ?? DEFAULT_SHED_RECOVER_SECONDS) * 1000;
  const { sheds, nextStepAt } = poolSheds(state, prev, opts.now.getTime(), recoverMs);
  const shares = new Map([...sheds].map(([pool, s]) => [pool, s.share]));
  const memo = opts.routeMemo;
  memo?.begin({
    pools: state.pools,
    health: state.health,
    shares,
    floorPool: opts.floorPool,
    originTemplate: opts.originTemplate,
  });
  const fromRule = (rule: KeptRule, source: string) =>
    memo
      ? memo.route(rule, source, () => routeFromRule(rule, source, state, opts, shares))
      : routeFromRule(rule, source, state, opts, shares);
  const carry = (route: Route, previous: Route | undefined): Route => {
    const carried = carriedRoute(route, previous);
    memo?.carried(route, carried);
    return carried;
  };

  /**
   * docs/reference.md §10: a rule that would send a fenced country outside its fence is invalid
   * for that country (reported on the rule's key); unfenced countries take every rule.
   */
  const inFence = (
    key: string,
    rule: CountryRule | undefined,
    cc: string,
    fenced: FenceOf | undefined,
  ): CountryRule | undefined => {
    if (!rule || !fenced) return rule;
    const crossing = fenceCrossing(key, rule, cc, fenced, state.pools);
    if (!crossing) return rule;
    problems.push(crossing);
    return undefined;
  };

  // Set when a resolve reads a last valid rule off the previous map: its outcome is not kept.
  let readPrevious = false;
  /**
   * The own rule: valid now, else the last valid one while the (invalid) key exists. For a
   * fenced country, a rule that crosses its fence is invalid, and so is such a last valid one.
   */
  const ownRule = (
    cc: string,
    fenced?: FenceOf,
    subject = cc,
  ): { rule: CountryRule; valid: boolean } | undefined => {
    const key = `country/${cc}`;
    const usable = usableRule(key, state.countries.get(cc), state, problems);
    const rule = inFence(key, usable, subject, fenced);
    if (rule) return { rule, valid: true };
    if (!state.countries.has(cc) && !state.invalidCountries.has(cc)) return undefined;
    readPrevious = true;
    const last = lastValidRule(prev, cc);
    const lastInFence = last && fenced ? inFence(key, last, subject, fenced) : last;
    return lastInFence ? { rule: lastInFence, valid: false } : undefined;
  };

  const { rules: continentRule, overrides: continentOverride } = continentRules(
    state,
    prev,
    opts.now,
    (key, rule) => usableRule(key, rule, state, problems),
  );

  /**
   * docs/reference.md §3.1: override/CC → country/CC → override/K → continent/K (→ default, by the caller).
   * With `fenced`, rules crossing the fence of `subject` (the country routed: `cc`, or a fenced
   * country resolving `_default`) are skipped; only `cc === subject` records `kept`.
   */
  const resolve = (cc: string, fenced?: FenceOf, subject = cc): Route | undefined => {
    const own = ownRule(cc, fenced, subject);
    const overrideKey = `override/${cc}`;
    const usable = usableRule(overrideKey, state.overrides.get(cc), state, problems);
    const override = inFence(overrideKey, usable, subject, fenced);
    const k = continentOf(cc);
    const viaContinent = (): Route | undefined => {
      if (!k) return undefined;
      const o = continentOverride.get(k);
      if (o && inFence(o.key, o.rule, cc, fenced)) return fromRule(o.rule, o.key);
      const c = continentRule.get(k);
      const key = `continent/${k}`;
      return c && inFence(key, c.rule, cc, fenced) ? fromRule(c.rule, key) : undefined;
    };
    const decided = override
      ? fromRule(override, `override/${cc}`)
      : own
        ? fromRule(own.rule, `country/${cc}`)
        : viaContinent();
    // docs/reference.md §11: continent < continent override < country < override, later winning.
    const attrs = mergeAttrs(
      k ? continentRule.get(k)?.rule.attrs : undefined,
      k ? continentOverride.get(k)?.rule.attrs : undefined,
      own?.rule.attrs,
      override?.attrs,
    );
    const route = decided && withAttrs(decided, attrs);
    // Kept whenever the route does not show the rule whole, so the next compile still has it.
    if (subject === cc && own && !(own.valid && route && routeShowsRule(route, own.rule, cc)))
      kept[cc] = keptOf(own.rule);
    return route;
  };

  const defaultRoute = resolve(DEFAULT_CC) ?? floorRoute(state, opts, "no-default-rule");
  const ccs = new Set<string>([...state.countries.keys(), ...state.overrides.keys()]);
  for (const cc of state.invalidCountries) ccs.add(cc);
  for (const cc of state.invalidOverrides) ccs.add(cc);
  for (const k of new Set([...continentRule.keys(), ...continentOverride.keys()]))
    for (const cc of countriesOf(k)) ccs.add(cc);
  // A fenced country gets its own entry even when it follows `_default` (a single lookup).
  for (const cc of cover.byCountry.keys()) ccs.add(cc);
  ccs.delete(DEFAULT_CC);

  const originOf = (pool: string) => originFor(pool, state, opts.originTemplate);
  const countries: Record<string, Route> = {};
  /** An unfenced country: its outcome from the memo, else resolved (and kept when it can be). */
  const unfenced = (cc: string): Route | undefined => {
    const previous = prev?.countries[cc];
    const inputs = memo && countryInputsOf(cc, state, continentRule, continentOverride);
    const hit = inputs && memo?.country(cc, inputs, previous);
    if (hit) {
      problems.push(...hit.problems);
      if (hit.kept) kept[cc] = hit.kept;
      return hit.route;
    }
    const from = problems.length;
    readPrevious = false;
    const resolved = resolve(cc);
    const route = resolved && carry(resolved, previous);
    if (inputs && !readPrevious)
      memo?.keepCountry(cc, inputs, { route, kept: kept[cc], problems: problems.slice(from) });
    return route;
  };

  for (const cc of [...ccs].sort()) {
    const fenced = cover.byCountry.get(cc);
    if (!fenced) {
      const route = unfenced(cc);
      if (route) countries[cc] = route;
      continue;
    }
    const route = resolve(cc, fenced);
    // docs/reference.md §10: the default, checked against this country's fence, then the fence
    // holds whatever decided (the fence's floor when nothing inside it is left).
    const decided = route ?? resolve(DEFAULT_CC, fenced, cc);
    countries[cc] = carry(
      fenceRoute(
        decided ?? floorRoute(state, opts, "all-pools-unhealthy"),
        fenced,
        state,
        originOf,
      ),
      prev?.countries[cc],
    );
  }
  Object.assign(kept, unshownContinentRules(continentRule, countries));

  // A fenced country's `_default` is resolved again: its key's problems are reported once.
  const sorted = listingProblems(problems);
  const base: CompiledMap = {
    v: 1,
    rev: revision,
    epoch: state.epoch,
    compiled_at: opts.now.toISOString(),
    default: carry(defaultRoute, prev?.default),
    countries,
    problems: [],
    history: opts.history ?? 0,
    ...(Object.keys(kept).length > 0 ? { kept } : {}),
    ...(sheds.size > 0 ? { sheds: Object.fromEntries(sheds) } : {}),
    ...(fences.size > 0 ? { fences: Object.fromEntries(fences) } : {}),
  };
  // Every Worker isolate parses this document: junk under the prefix must not bloat it.
  const budget = opts.routesBudgetBytes ?? DEFAULT_ROUTES_BUDGET_BYTES;
  const map: CompiledMap = { ...base, problems: fitProblems(base, sorted, budget) };
  return { map, problems: sorted, state, nextShedStepAt: nextStepAt };
}
