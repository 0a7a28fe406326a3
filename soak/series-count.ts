import { parsePromText } from "../testkit/prom-text.js";

/**
 * Series of a `/metrics` text as a time-series database holds what grows with labels: one per
 * metric and label set, a histogram's or summary's buckets, quantiles, `_sum` and `_count`
 * counted once (they grow together, by a fixed number, when a label set appears).
 */
export function countSeries(text: string): number {
  const grouped = new Set<string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (histogram|summary)$/gm)) {
    if (m[1]) grouped.add(m[1]);
  }
  const keys = new Set<string>();
  for (const s of parsePromText(text)) {
    const base = s.name.replace(/_(bucket|sum|count)$/, "");
    const name = grouped.has(base) ? base : s.name;
    const labels = Object.entries(s.labels)
      .filter(([k]) => !(grouped.has(base) && (k === "le" || k === "quantile")))
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
      .join(",");
    keys.add(`${name}{${labels}}`);
  }
  return keys.size;
}
