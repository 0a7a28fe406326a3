import { addCounts, histogramQuantile } from "../../core/contract/histogram.js";
import { TTFB_BUCKETS_MS } from "../../core/contract/ttfb-buckets.js";
import type { MinuteRow, ObservationDocument } from "../../observer/observation-document.js";
import { ERROR_OUTCOMES } from "../../observer/observation-document.js";
import type { TopResult, TopRow } from "../output/shapes/top-shape.js";

const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;

/**
 * Seconds the document's rows cover: from `since` (the oldest minute summed) to `until`, since
 * the window rounds out to whole minutes; the window itself when the edge does not say.
 */
function coveredSeconds(doc: ObservationDocument): number {
  const s = (Date.parse(doc.until) - Date.parse(doc.since)) / 1000;
  return Number.isFinite(s) && s >= 1 ? s : doc.window_s;
}

/** One (country, pool)'s minutes summed: counts add, histograms merge bucket by bucket. */
interface PairSum {
  readonly country: string;
  readonly pool: string;
  requests: number;
  errors: number;
  starved: number;
  cmcd: number | undefined;
  readonly ttfb: number[];
}

function sumByPair(rows: readonly MinuteRow[], countries: ReadonlySet<string>): PairSum[] {
  const sums = new Map<string, PairSum>();
  for (const r of rows) {
    if (countries.size > 0 && !countries.has(r.country)) continue;
    const key = `${r.country}\u0000${r.pool}`;
    let sum = sums.get(key);
    if (!sum) {
      sum = {
        country: r.country,
        pool: r.pool,
        requests: 0,
        errors: 0,
        starved: 0,
        cmcd: undefined,
        ttfb: new Array<number>(TTFB_BUCKETS_MS.length + 1).fill(0),
      };
      sums.set(key, sum);
    }
    sum.requests += r.requests;
    for (const o of ERROR_OUTCOMES) sum.errors += r.outcomes[o] ?? 0;
    sum.starved += r.starved;
    if (r.cmcd_requests !== undefined) sum.cmcd = (sum.cmcd ?? 0) + r.cmcd_requests;
    addCounts(sum.ttfb, r.ttfb_counts);
  }
  return [...sums.values()];
}

/**
 * `edgectl top`'s rows: the edge's minute rows (only `countries`' when any are given) summed per
 * (country, pool) over the window, as rates and ratios, beside the pool's checkers' p90 from etcd.
 */
export function topRows(
  doc: ObservationDocument,
  checkersP90: ReadonlyMap<string, number>,
  countries: ReadonlySet<string>,
): TopResult {
  const seconds = coveredSeconds(doc);
  const rows: TopRow[] = sumByPair(doc.rows, countries).map((r) => ({
    country: r.country,
    pool: r.pool,
    requests_per_s: round(r.requests / seconds, 3),
    error_ratio: r.requests > 0 ? round(Math.min(1, r.errors / r.requests), 4) : 0,
    ttfb_ms: {
      p50: histogramQuantile(TTFB_BUCKETS_MS, r.ttfb, 0.5),
      p90: histogramQuantile(TTFB_BUCKETS_MS, r.ttfb, 0.9),
    },
    starved_ratio: r.cmcd ? round(Math.min(1, r.starved / r.cmcd), 4) : null,
    checkers_p90_ms: checkersP90.get(r.pool) ?? null,
  }));
  rows.sort((a, b) =>
    a.country !== b.country
      ? a.country < b.country
        ? -1
        : 1
      : a.pool < b.pool
        ? -1
        : a.pool > b.pool
          ? 1
          : 0,
  );
  return { window_s: doc.window_s, rows };
}
