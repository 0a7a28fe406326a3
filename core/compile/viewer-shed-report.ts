import type { CompiledMap } from "../contract/compiled-map.js";
import { isCountryCode } from "../contract/countries.js";
import { isPoolName } from "../contract/pool-name.js";
import type { RoutingState } from "../intent/routing-state.js";
import type { SlowMs } from "../intent/schema.js";

/** One country's shed of one pool by its own viewers, as `/status` and edgectl show it (§12). */
export interface ViewerShedReport {
  readonly country: string;
  readonly pool: string;
  /** Percent of the country's viewers of the pool shed (10–100), as the map says. */
  readonly share: number;
  /** The country's viewers' p90 of the pool; null once the observation has aged out. */
  readonly p90_ms: number | null;
  /** The requests behind `p90_ms`; null with it. */
  readonly samples: number | null;
  readonly slow_ms: SlowMs | null;
}

/**
 * Every (country, pool) the map's `viewer_sheds` holds, sorted by country then pool, with the
 * observation behind it (docs/reference.md §12). A map read from KV may hold anything: only
 * country codes and pool names are reported, so nothing else reaches a terminal.
 */
export function viewerShedReports(
  state: Pick<RoutingState, "pools" | "observed">,
  map: Pick<CompiledMap, "viewer_sheds"> | null,
): ViewerShedReport[] {
  const byCountry = map?.viewer_sheds ?? {};
  const out: ViewerShedReport[] = [];
  for (const country of Object.keys(byCountry).sort()) {
    if (!isCountryCode(country)) continue;
    const sheds = byCountry[country] ?? {};
    for (const pool of Object.keys(sheds).sort()) {
      if (!isPoolName(pool)) continue;
      const share = sheds[pool]?.share;
      if (typeof share !== "number") continue;
      const seen = state.observed.get(country)?.get(pool);
      out.push({
        country,
        pool,
        share,
        p90_ms: seen ? Math.round(seen.p90_ms) : null,
        samples: seen?.samples ?? null,
        slow_ms: state.pools.get(pool)?.slow_ms ?? null,
      });
    }
  }
  return out;
}

/**
 * `BR on fra-1: viewers' p90 2400 ms over 180 requests, watermarks 800/2000 ms, shed by viewers
 * 50 %`: one country's viewer shed in one phrase.
 */
export function describeViewerShed(r: ViewerShedReport): string {
  const seen =
    r.p90_ms === null
      ? "no observation (too few viewers left to judge), stepping down"
      : `viewers' p90 ${r.p90_ms} ms over ${r.samples ?? 0} requests`;
  const marks = r.slow_ms ? `, watermarks ${r.slow_ms.low}/${r.slow_ms.high} ms` : "";
  return `${r.country} on ${r.pool}: ${seen}${marks}, shed by viewers ${r.share} %`;
}
