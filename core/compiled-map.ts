/** Why a route (or a response) is degraded. The first two come from compilation. */
export type DegradedReason =
  | "all-pools-unhealthy"
  | "no-default-rule"
  | "stale-map"
  | "no-map"
  | "origin-failover";

/** One hop of a route's failover chain. */
export interface ChainLink {
  readonly pool: string;
  readonly origin: string;
}

/** The compiled decision for one country (or the default). */
export interface Route {
  readonly pool: string;
  readonly origin: string;
  readonly chain: readonly ChainLink[];
  /** The etcd key that decided: `country/DE`, `override/DE`, `country/_default`, or `floor`. */
  readonly source: string;
  readonly degraded: DegradedReason | null;
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

function routeJson(r: Route): Route {
  return {
    pool: r.pool,
    origin: r.origin,
    chain: r.chain.map((c) => ({ pool: c.pool, origin: c.origin })),
    source: r.source,
    degraded: r.degraded,
  };
}

/** Serializes a map as stable JSON: fixed key order, countries sorted, no whitespace. */
export function serializeMap(map: CompiledMap): string {
  const countries: Record<string, Route> = {};
  for (const cc of Object.keys(map.countries).sort()) {
    const route = map.countries[cc];
    if (route) countries[cc] = routeJson(route);
  }
  return JSON.stringify({
    v: 1,
    rev: map.rev,
    epoch: map.epoch,
    compiled_at: map.compiled_at,
    default: routeJson(map.default),
    countries,
    problems: [...map.problems],
    history: map.history,
  });
}

/** Serializes `meta` with its fixed key order. */
export function serializeMeta(meta: MapMeta): string {
  return JSON.stringify({
    v: 1,
    rev: meta.rev,
    epoch: meta.epoch,
    heartbeat_at: meta.heartbeat_at,
    pusher: meta.pusher,
    countries: meta.countries,
    problems: [...meta.problems],
  });
}

/** True when two maps are the same document apart from `compiled_at` (SPEC §5.2). */
export function sameMap(a: CompiledMap, b: CompiledMap): boolean {
  return serializeMap({ ...a, compiled_at: "" }) === serializeMap({ ...b, compiled_at: "" });
}

/**
 * True when two maps route identically and report the same problems, whatever their `rev`:
 * what anti-entropy counts as drift.
 */
export function sameRouting(a: CompiledMap, b: CompiledMap): boolean {
  return sameMap({ ...a, rev: 0, epoch: 0 }, { ...b, rev: 0, epoch: 0 });
}
