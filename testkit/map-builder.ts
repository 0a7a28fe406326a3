import type { CompiledMap, Route } from "../core/index.js";

/** A route in a case map: the healthy chain (first = pool), the deciding key, a reason. */
export interface RouteSpec {
  readonly chain: readonly string[];
  readonly source: string;
  readonly degraded?: "all-pools-unhealthy" | "no-default-rule";
}

/** A compiled map without origins; `buildMap` fills them in. */
export interface MapSpec {
  readonly default: RouteSpec;
  readonly countries?: Readonly<Record<string, RouteSpec>>;
}

function route(spec: RouteSpec, originOf: (pool: string) => string): Route {
  const chain = spec.chain.map((pool) => ({ pool, origin: originOf(pool) }));
  const first = chain[0];
  if (!first) throw new Error("a case route needs at least one pool");
  return {
    pool: first.pool,
    origin: first.origin,
    chain,
    source: spec.source,
    degraded: spec.degraded ?? null,
  };
}

/** Builds a `CompiledMap` from a spec, with origins from `originOf` and the given `rev`. */
export function buildMap(
  spec: MapSpec,
  opts: { readonly rev: number; readonly originOf: (pool: string) => string },
): CompiledMap {
  const countries: Record<string, Route> = {};
  for (const [cc, r] of Object.entries(spec.countries ?? {}))
    countries[cc] = route(r, opts.originOf);
  return {
    v: 1,
    rev: opts.rev,
    epoch: 1,
    compiled_at: "2026-01-01T00:00:00.000Z",
    default: route(spec.default, opts.originOf),
    countries,
    problems: [],
    history: 0,
  };
}
