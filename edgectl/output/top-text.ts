import { safeText } from "../../core/index.js";
import type { TopResult } from "./shapes/top-shape.js";

const HEAD = ["COUNTRY", "POOL", "REQ/S", "ERRORS", "P50", "P90", "STARVED", "CHECKERS P90"];

const percent = (r: number | null) => (r === null ? "-" : `${(r * 100).toFixed(1)}%`);
const millis = (ms: number | null) => (ms === null ? "-" : `${ms} ms`);
const rate = (n: number) => (n >= 10 ? n.toFixed(0) : n >= 1 ? n.toFixed(1) : n.toFixed(2));

/**
 * `edgectl top`'s table: one line per (country, pool), the viewers' p90 beside the checkers'.
 * Countries and pools come from the edge, so they are quoted as safe text.
 */
export function formatTop(result: TopResult, countries: readonly string[]): string[] {
  if (result.rows.length === 0)
    return [
      countries.length > 0
        ? `no requests from ${countries.join(", ")} in the last ${result.window_s} s`
        : `no requests in the last ${result.window_s} s`,
    ];
  const cells = result.rows.map((r) => [
    safeText(r.country, 16),
    safeText(r.pool, 63),
    rate(r.requests_per_s),
    percent(r.error_ratio),
    millis(r.ttfb_ms.p50),
    millis(r.ttfb_ms.p90),
    percent(r.starved_ratio),
    millis(r.checkers_p90_ms),
  ]);
  const widths = HEAD.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]?.length ?? 0)));
  // Names are left-aligned, figures right-aligned, so columns of numbers line up.
  const line = (c: readonly string[]) =>
    c
      .map((v, i) => (i < 2 ? v.padEnd(widths[i] ?? 0) : v.padStart(widths[i] ?? 0)))
      .join("  ")
      .trimEnd();
  return [`window ${result.window_s} s`, line(HEAD), ...cells.map(line)];
}
