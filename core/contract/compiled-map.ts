import type { Fence } from "./fence.js";

/**
 * Why a route (or a response) is degraded. The first four come from compilation;
 * `fence-unsatisfiable` is a fenced country with no pool inside its fence (answered 503);
 * `pathway-refused` a request pinned to a pool it may not take (docs/reference.md §15).
 */
export type DegradedReason =
  | "all-pools-unhealthy"
  | "all-pools-slow"
  | "no-default-rule"
  | "fence-unsatisfiable"
  | "stale-map"
  | "no-map"
  | "pathway-refused"
  | "origin-failover";

/** One hop of a route's failover chain. */
export interface ChainLink {
  readonly pool: string;
  readonly origin: string;
}

/** One healthy weighted pool of a route and its relative weight (1–1000). */
export interface RouteWeight {
  readonly pool: string;
  readonly weight: number;
}

/**
 * A pool of a route that sheds viewers, and its shed share in percent (10–100, steps of 10);
 * `by: "viewers"` when the share is the country's own viewers' (docs/reference.md §12) rather
 * than the pool's checkers'.
 */
export interface RouteShed {
  readonly pool: string;
  readonly share: number;
  readonly by?: "viewers";
}

/**
 * A slow pool's shed share, when it last changed (`at`, ISO 8601) and since when its p90 has
 * stayed low enough for it to fall (`below_since`, absent while it has not): the hysteresis
 * state the next compile steps down from (docs/reference.md §9).
 */
export interface PoolShed {
  readonly share: number;
  readonly at: string;
  readonly below_since?: string | undefined;
}

/** The compiled decision for one country (or the default). */
export interface Route {
  readonly pool: string;
  readonly origin: string;
  readonly chain: readonly ChainLink[];
  /** The etcd key that decided: `country/DE`, `override/DE`, `country/_default`, or `floor`. */
  readonly source: string;
  readonly degraded: DegradedReason | null;
  /**
   * The rule's weights over its healthy weighted pools, in chain order (docs/reference.md §3.5); omitted when
   * the rule has none or none of them is healthy. The Worker picks a pool per viewer from them.
   */
  readonly weights?: readonly RouteWeight[];
  /**
   * The route's pools that shed viewers (docs/reference.md §9), in chain order; omitted when none
   * does. The shed is already in `weights`; this says why, for `X-Edge-Shed`.
   */
  readonly shed?: readonly RouteShed[];
  /**
   * Market attributes (docs/reference.md §11): the continent rule's, overlaid by the country
   * rule's, overlaid by an active override's, names sorted; omitted when none. The Worker sends
   * each to the origin as `X-Edge-Attr-{name}`.
   */
  readonly attrs?: Readonly<Record<string, string>>;
  /**
   * The fence (`fence/{name}`, docs/reference.md §10) that covers the country: every pool of the
   * chain and the weights lies inside it. Omitted for unfenced countries and the default route.
   * The Worker says it in `X-Edge-Fence`.
   */
  readonly fence?: string;
}

/** A country's last valid own rule, as the map carries it for the next compile (`kept`). */
export interface KeptRule {
  readonly primary: string;
  readonly fallbacks: readonly string[];
  readonly weights?: Readonly<Record<string, number>> | undefined;
  readonly attrs?: Readonly<Record<string, string>> | undefined;
}

/**
 * The running canary's side of the map (docs/reference.md §13): for each route the canary
 * changes, the route its share of viewers take. A country not listed takes its stable route,
 * except that a country without its own stable route takes the canary's `default` when there is
 * one.
 */
export interface MapCanary {
  /** `c` and the epoch that started it: `X-Edge-Canary` says `{id}:canary` or `{id}:stable`. */
  readonly id: string;
  /** Percent (1–50) of each changed route's viewers on the canary side, sticky by viewer key. */
  readonly share: number;
  /** The canary side of `default`, when the canary changes it. */
  readonly default?: Route;
  /** The canary side of each country route the canary changes. */
  readonly countries: Readonly<Record<string, Route>>;
}

/** The document stored under the KV key `routes`. */
export interface CompiledMap {
  readonly v: 1;
  readonly rev: number;
  readonly epoch: number;
  readonly compiled_at: string;
  readonly default: Route;
  readonly countries: Readonly<Record<string, Route>>;
  readonly problems: readonly string[];
  /**
   * Which etcd history the map belongs to: 0 at first, raised by one each time the pushers follow
   * an etcd that was replaced or restored from a snapshot (its revisions start lower). Maps order
   * by `(history, rev)`, so a new history's lower revisions win over an old history's, and a stale
   * KV copy of the old history never does.
   */
  readonly history: number;
  /**
   * The last valid `country/` rule of each country (or `_default`), and `continent/K` rule of each
   * continent (keyed `continent/K`), whose routes do not show it
   * whole: its rule is invalid now, an override hides it, or some of its pools are not healthy.
   * Omitted when empty. The next compile (after a restart: the map read back from KV) routes an
   * invalid rule by it, re-filtered by current health, so pools that recover come back (docs/reference.md
   * §3.4). The Worker ignores it.
   */
  readonly kept?: Readonly<Record<string, KeptRule>>;
  /**
   * Each shedding pool's share and when it last changed, by pool; omitted when no pool sheds.
   * The next compile lets a share fall by one step per recover period from it (hysteresis). The
   * Worker ignores it.
   */
  readonly sheds?: Readonly<Record<string, PoolShed>>;
  /**
   * Each country's shed of a `viewers: true` pool by its own viewers' p90 (docs/reference.md
   * §12), by country and then pool, with the same hysteresis state as `sheds`; omitted when no
   * country sheds. The Worker ignores it (the shed is in the country's route).
   */
  readonly viewer_sheds?: Readonly<Record<string, Readonly<Record<string, PoolShed>>>>;
  /**
   * The fences in force (docs/reference.md §10), by name: each `fence/` key's value, or the last
   * valid one while its key is invalid. Omitted when there is none. The next compile (after a
   * restart: the map read back from KV) keeps applying a fence whose key turned invalid, so a
   * damaged value never lifts a fence. The Worker ignores it.
   */
  readonly fences?: Readonly<Record<string, Fence>>;
  /** The running canary's routes; omitted when no canary runs (or it changes no route). */
  readonly canary?: MapCanary;
}

/** The document stored under the KV key `meta`. */
export interface MapMeta {
  readonly v: 1;
  readonly rev: number;
  readonly epoch: number;
  readonly heartbeat_at: string;
  readonly pusher: string;
  readonly countries: number;
  readonly problems: readonly string[];
}
