import type { Observed } from "../../core/index.js";

/** What a country's viewers of one pool get (`observed/{CC}/{pool}`, docs/reference.md §12). */
export interface PoolViewers extends Observed {
  readonly pool: string;
  /** The pool's checkers' p90 (its `health/` keys), beside the viewers'; null without one. */
  readonly checkers_p90_ms: number | null;
}

/**
 * The country's valid `observed/{cc}/*` values as the compile decoded them (`RoutingState`'s
 * `observed`, pools sorted), beside what each pool's checkers say. Invalid values are not there
 * (the compile names them as problems).
 */
export function countryViewers(
  observed: ReadonlyMap<string, Observed> | undefined,
  health: ReadonlyMap<string, { readonly p90_ms?: number | undefined }>,
): PoolViewers[] {
  return [...(observed ?? [])].map(([pool, o]) => ({
    pool,
    p90_ms: o.p90_ms,
    samples: o.samples,
    error_ratio: o.error_ratio,
    checkers_p90_ms: health.get(pool)?.p90_ms ?? null,
  }));
}
