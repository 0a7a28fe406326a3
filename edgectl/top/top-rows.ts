import type { ObservationDocument } from "../../observer/observation-document.js";
import { ERROR_OUTCOMES } from "../../observer/observation-document.js";
import type { TopResult, TopRow } from "../output/shapes/top-shape.js";

const round = (n: number, places: number) => Math.round(n * 10 ** places) / 10 ** places;

/**
 * Seconds the document's rows cover: from `since` (the oldest minute summed) to `until`, since
 * the window rounds out to whole minutes; the window itself when the edge does not say.
 */
function coveredSeconds(doc: ObservationDocument): number {
  if (doc.since === undefined) return doc.window_s;
  const s = (Date.parse(doc.until) - Date.parse(doc.since)) / 1000;
  return Number.isFinite(s) && s >= 1 ? s : doc.window_s;
}

/**
 * `edgectl top`'s rows: each (country, pool) row of the edge's observations (only `countries`'
 * when any are given) as rates and ratios, beside the pool's checkers' p90 from etcd.
 */
export function topRows(
  doc: ObservationDocument,
  checkersP90: ReadonlyMap<string, number>,
  countries: ReadonlySet<string>,
): TopResult {
  const seconds = coveredSeconds(doc);
  const rows: TopRow[] = [];
  for (const r of doc.rows) {
    if (countries.size > 0 && !countries.has(r.country)) continue;
    let errors = 0;
    for (const o of ERROR_OUTCOMES) errors += r.outcomes[o] ?? 0;
    const cmcd = r.cmcd_requests;
    rows.push({
      country: r.country,
      pool: r.pool,
      requests_per_s: round(r.requests / seconds, 3),
      error_ratio: r.requests > 0 ? round(Math.min(1, errors / r.requests), 4) : 0,
      ttfb_ms: { p50: r.ttfb_ms?.p50 ?? null, p90: r.ttfb_ms?.p90 ?? null },
      starved_ratio: cmcd ? round(Math.min(1, r.starved / cmcd), 4) : null,
      checkers_p90_ms: checkersP90.get(r.pool) ?? null,
    });
  }
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
