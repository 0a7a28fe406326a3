import type { KeptRule, Route } from "../contract/compiled-map.js";
import type { ContinentCode } from "../contract/continents.js";
import { continentOf } from "../contract/continents.js";
import { DEFAULT_CC } from "../contract/countries.js";
import { mergeAttrs } from "../contract/market-attrs.js";
import type { RouteSettings } from "../contract/route-settings.js";
import type {
  ContinentOverrideRule,
  ContinentRule,
  CountryInputs,
} from "../incremental/country-inputs.js";
import { countryInputsOf } from "../incremental/country-inputs.js";
import type { RouteMemo } from "../incremental/route-memo.js";
import type { Problem } from "../intent/problem.js";
import type { RoutingState } from "../intent/routing-state.js";
import type { CountryRule } from "../intent/schema.js";
import type { CarriedState } from "./carried-state.js";
import { type FenceOf, fenceCrossing, fenceRoute } from "./fences.js";
import { lastValidRule, routeShowsRule } from "./last-valid-rule.js";
import { carriedRoute } from "./route-carry-over.js";
import {
  floorRoute,
  keptOf,
  originFor,
  routeFromRule,
  usableRule,
  withAttrs,
} from "./rule-route.js";

/** What one compile's resolver reads: the state, what it carries, and the steps before it. */
export interface ResolverInputs {
  readonly state: RoutingState;
  readonly carried: CarriedState | null;
  readonly settings: RouteSettings;
  /** The shed share of each shedding pool (percent). */
  readonly shares: ReadonlyMap<string, number>;
  /** Each country's own viewer shed shares (percent), by country and then pool (§12). */
  readonly viewerShares: ReadonlyMap<string, ReadonlyMap<string, number>>;
  readonly continentRules: ReadonlyMap<ContinentCode, ContinentRule>;
  readonly continentOverrides: ReadonlyMap<ContinentCode, ContinentOverrideRule>;
  readonly memo: RouteMemo | undefined;
}

/**
 * Resolves countries by docs/reference.md §3.1's order (override/CC → country/CC → override/K →
 * continent/K, the default by the caller), with fences (§10), last valid rules (§3.4) and the
 * route memo. It collects what it finds: the problems of the keys it reads, and the `kept`
 * rules the next compile needs.
 */
export class CountryResolver {
  readonly problems: Problem[] = [];
  readonly kept: Record<string, KeptRule> = {};
  // Set when a resolve reads a last valid rule off the carried state: its outcome is not memoised.
  private readCarried = false;

  constructor(private readonly x: ResolverInputs) {}

  /** The origin of `pool` (its `pool/` definition, else the template). */
  originOf = (pool: string): string =>
    originFor(pool, this.x.state, this.x.settings.originTemplate);

  /** `route`, or the carried object when it holds the same data (and the memo learns of it). */
  carry(route: Route, previous: Route | undefined): Route {
    const carried = carriedRoute(route, previous);
    this.x.memo?.carried(route, carried);
    return carried;
  }

  /** The route when nothing is left: the floor pool, saying why. */
  floor(reason: "no-default-rule" | "all-pools-unhealthy"): Route {
    return floorRoute(this.x.state, this.x.settings, reason);
  }

  /** The default route (`_default`'s rule, else the floor). */
  defaultRoute(): Route {
    return this.resolve(DEFAULT_CC) ?? this.floor("no-default-rule");
  }

  /** An unfenced country: its outcome from the memo, else resolved (and memoised when it can be). */
  unfenced(cc: string): Route | undefined {
    const { memo, state, carried } = this.x;
    const previous = carried?.countries[cc];
    const inputs: CountryInputs | undefined =
      memo && countryInputsOf(cc, state, this.x.continentRules, this.x.continentOverrides);
    const hit = inputs && memo?.country(cc, inputs, previous);
    if (hit) {
      this.problems.push(...hit.problems);
      if (hit.kept) this.kept[cc] = hit.kept;
      return hit.route;
    }
    const from = this.problems.length;
    this.readCarried = false;
    const own = this.resolve(cc);
    // A country that sheds by its viewers gets a route of its own even when `_default` decides
    // it; `_default`'s rule is not among its inputs, so that outcome is not memoised.
    const viaDefault = !own && this.x.viewerShares.has(cc);
    const resolved = viaDefault ? this.resolve(DEFAULT_CC, undefined, cc) : own;
    const route = resolved && this.carry(resolved, previous);
    if (inputs && !this.readCarried && !viaDefault)
      memo?.keepCountry(cc, inputs, {
        route,
        kept: this.kept[cc],
        problems: this.problems.slice(from),
      });
    return route;
  }

  /**
   * A fenced country (docs/reference.md §10): its rules inside the fence, else the default
   * checked against its fence, then the fence holds whatever decided (its floor when nothing
   * inside it is left).
   */
  fenced(cc: string, fenced: FenceOf): Route {
    const decided = this.resolve(cc, fenced) ?? this.resolve(DEFAULT_CC, fenced, cc);
    return this.carry(
      fenceRoute(decided ?? this.floor("all-pools-unhealthy"), fenced, this.x.state, this.originOf),
      this.x.carried?.countries[cc],
    );
  }

  private usable(key: string, rule: CountryRule | undefined): CountryRule | undefined {
    return usableRule(key, rule, this.x.state, this.problems);
  }

  /**
   * The route of `rule` for `subject` (the country routed). A country that sheds a pool by its
   * own viewers (§12) sheds it by the larger of that share and the pool's; its route is its own,
   * never the memo's shared one.
   */
  private fromRule(rule: KeptRule, source: string, subject: string): Route {
    const { memo, state, settings, shares } = this.x;
    const own = this.x.viewerShares.get(subject);
    if (own) {
      const combined = new Map(shares);
      const byViewers = new Set<string>();
      for (const [pool, share] of own) {
        if (share <= (shares.get(pool) ?? 0)) continue;
        combined.set(pool, share);
        byViewers.add(pool);
      }
      return routeFromRule(rule, source, state, settings, combined, byViewers);
    }
    const make = () => routeFromRule(rule, source, state, settings, shares);
    return memo ? memo.route(rule, source, make) : make();
  }

  /**
   * A rule that would send a fenced country outside its fence is invalid for that country
   * (reported on the rule's key); unfenced countries take every rule.
   */
  private inFence(
    key: string,
    rule: CountryRule | undefined,
    cc: string,
    fenced: FenceOf | undefined,
  ): CountryRule | undefined {
    if (!rule || !fenced) return rule;
    const crossing = fenceCrossing(key, rule, cc, fenced, this.x.state.pools);
    if (!crossing) return rule;
    this.problems.push(crossing);
    return undefined;
  }

  /**
   * The own rule: valid now, else the last valid one while the (invalid) key exists. For a
   * fenced country, a rule that crosses its fence is invalid, and so is such a last valid one.
   */
  private ownRule(
    cc: string,
    fenced?: FenceOf,
    subject = cc,
  ): { rule: CountryRule; valid: boolean } | undefined {
    const { state } = this.x;
    const key = `country/${cc}`;
    const rule = this.inFence(key, this.usable(key, state.countries.get(cc)), subject, fenced);
    if (rule) return { rule, valid: true };
    if (!state.countries.has(cc) && !state.invalidCountries.has(cc)) return undefined;
    this.readCarried = true;
    const last = lastValidRule(this.x.carried, cc);
    const lastInFence = last && fenced ? this.inFence(key, last, subject, fenced) : last;
    return lastInFence ? { rule: lastInFence, valid: false } : undefined;
  }

  /**
   * With `fenced`, rules crossing the fence of `subject` (the country routed: `cc`, or a fenced
   * country resolving `_default`) are skipped; only `cc === subject` records `kept`.
   */
  private resolve(cc: string, fenced?: FenceOf, subject = cc): Route | undefined {
    const { state, continentRules, continentOverrides } = this.x;
    const own = this.ownRule(cc, fenced, subject);
    const overrideKey = `override/${cc}`;
    const usable = this.usable(overrideKey, state.overrides.get(cc));
    const override = this.inFence(overrideKey, usable, subject, fenced);
    const k = continentOf(cc);
    const viaContinent = (): Route | undefined => {
      if (!k) return undefined;
      const o = continentOverrides.get(k);
      if (o && this.inFence(o.key, o.rule, cc, fenced))
        return this.fromRule(o.rule, o.key, subject);
      const c = continentRules.get(k);
      const key = `continent/${k}`;
      return c && this.inFence(key, c.rule, cc, fenced)
        ? this.fromRule(c.rule, key, subject)
        : undefined;
    };
    const decided = override
      ? this.fromRule(override, overrideKey, subject)
      : own
        ? this.fromRule(own.rule, `country/${cc}`, subject)
        : viaContinent();
    // docs/reference.md §11: continent < continent override < country < override, later winning.
    const attrs = mergeAttrs(
      k ? continentRules.get(k)?.rule.attrs : undefined,
      k ? continentOverrides.get(k)?.rule.attrs : undefined,
      own?.rule.attrs,
      override?.attrs,
    );
    const route = decided && withAttrs(decided, attrs);
    // Kept whenever the route does not show the rule whole, so the next compile still has it.
    if (subject === cc && own && !(own.valid && route && routeShowsRule(route, own.rule, cc)))
      this.kept[cc] = keptOf(own.rule);
    return route;
  }
}
