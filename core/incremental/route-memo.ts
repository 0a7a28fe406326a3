import type { KeptRule, Route } from "../contract/compiled-map.js";
import type { RouteSettings } from "../contract/route-settings.js";
import type { Problem } from "../intent/problem.js";
import type { RoutingState } from "../intent/routing-state.js";
import { type CountryInputs, sameCountryInputs } from "./country-inputs.js";
import { sameReports } from "./pool-checkers.js";

/** What a rule's route depends on besides the rule and its source key. */
export interface RouteInputs extends RouteSettings {
  readonly pools: RoutingState["pools"];
  readonly health: RoutingState["health"];
  /** The shed share of each shedding pool (percent). */
  readonly shares: ReadonlyMap<string, number>;
  /** Each country's viewer shed shares (percent), by country and then pool (§12). */
  readonly viewerShares?: ReadonlyMap<string, ReadonlyMap<string, number>>;
}

/** What resolving a country gave: its route as the map holds it, its `kept` rule, its problems. */
export interface CountryOutcome {
  readonly route: Route | undefined;
  readonly kept: KeptRule | undefined;
  readonly problems: readonly Problem[];
}

function sameShares(a: ReadonlyMap<string, number>, b: ReadonlyMap<string, number>): boolean {
  if (a.size !== b.size) return false;
  for (const [pool, share] of a) if (b.get(pool) !== share) return false;
  return true;
}

function sameViewerShares(a: RouteInputs["viewerShares"], b: RouteInputs["viewerShares"]): boolean {
  const x = a ?? new Map<string, ReadonlyMap<string, number>>();
  const y = b ?? new Map<string, ReadonlyMap<string, number>>();
  if (x.size !== y.size) return false;
  for (const [cc, shares] of x) {
    const other = y.get(cc);
    if (!other || !sameShares(shares, other)) return false;
  }
  return true;
}

function sameInputs(a: RouteInputs, b: RouteInputs): boolean {
  return (
    a.pools === b.pools &&
    a.floorPool === b.floorPool &&
    a.originTemplate === b.originTemplate &&
    sameReports(a.health, b.health) &&
    sameShares(a.shares, b.shares) &&
    sameViewerShares(a.viewerShares, b.viewerShares)
  );
}

/**
 * The routes one compile made from its rules, handed to the next compile: a rule object that is
 * still the one the state holds (a `RoutingIndex` keeps it while its key is unchanged) gets
 * its route back without computing it again, as long as the pools, their reports, the shed shares
 * (countries' viewer sheds too) and the route settings are the same ones. Any other change starts afresh. A compile's output is
 * the same with or without a memo; routes are never mutated, so handing one out twice is safe.
 *
 * It also keeps what each unfenced country resolved to, so a compile after a change to one key
 * resolves only the countries that key decides: the others take their {@link CountryOutcome}
 * back while their {@link CountryInputs} are the same objects and the previous map still holds
 * the route the memo kept (a map from elsewhere, such as KV, resolves every country afresh).
 */
export class RouteMemo {
  private inputs: RouteInputs | null = null;
  private routes = new WeakMap<KeptRule, Map<string, Route>>();
  /** Where each route handed out sits, so {@link carried} can replace it. */
  private places = new WeakMap<Route, Map<string, Route>>();
  private countries = new Map<string, { inputs: CountryInputs; outcome: CountryOutcome }>();

  /** Starts a compile with `inputs`: the routes kept stay only if they are the same. */
  begin(inputs: RouteInputs): void {
    if (!this.inputs || !sameInputs(this.inputs, inputs)) {
      this.routes = new WeakMap();
      this.places = new WeakMap();
      this.countries.clear();
    }
    this.inputs = inputs;
  }

  /** The route of `rule` decided by `source`: the one kept, else `make()`'s, kept. */
  route(rule: KeptRule, source: string, make: () => Route): Route {
    let bySource = this.routes.get(rule);
    const kept = bySource?.get(source);
    if (kept) return kept;
    const route = make();
    if (!bySource) {
      bySource = new Map();
      this.routes.set(rule, bySource);
    }
    bySource.set(source, route);
    this.places.set(route, bySource);
    return route;
  }

  /**
   * `route` went into the map as `carried`, an earlier object with the same data: later compiles
   * hand out `carried`, which the next carry-over then recognises by identity.
   */
  carried(route: Route, carried: Route): void {
    if (route === carried) return;
    const bySource = this.places.get(route);
    if (!bySource) return;
    for (const [source, r] of bySource)
      if (r === route) {
        bySource.set(source, carried);
        this.places.set(carried, bySource);
      }
  }

  /**
   * The outcome kept for `cc`, when its inputs are the same objects and `previous` (the previous
   * map's route for `cc`) is the route kept: resolving it again would give the same.
   */
  country(cc: string, inputs: CountryInputs, previous: Route | undefined): CountryOutcome | null {
    const kept = this.countries.get(cc);
    if (!kept || kept.outcome.route !== previous || !sameCountryInputs(kept.inputs, inputs))
      return null;
    return kept.outcome;
  }

  /**
   * Keeps what `cc` resolved to from `inputs`. Only for an outcome that depends on nothing else
   * of the previous map than the route it carried over (not a last valid rule read off it).
   */
  keepCountry(cc: string, inputs: CountryInputs, outcome: CountryOutcome): void {
    this.countries.set(cc, { inputs, outcome });
  }
}
