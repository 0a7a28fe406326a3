import type { ObserveResult } from "../sections/viewers-observed.js";
import { check, checkCi, type Row } from "./row.js";

const pct = (v: number) => `${(v * 100).toFixed(2)} %`;

/** The table's `observe.*` rows (docs/reference.md §12): recording's CPU, count and p90 error. */
export function observeRows(r: ObserveResult | null): Row[] {
  if (!r) return [];
  return [
    [
      "observe.cpu_us_per_req (recording on − off, workerd)",
      `${r.cpu_us_per_req} µs (CI ${r.cpu_us_per_req_ci95[0]}–${r.cpu_us_per_req_ci95[1]})`,
      `${r.cpu_us_off} µs off, ${r.cpu_us_on} µs on`,
      "",
      "≤ 5 µs",
      checkCi(r.cpu_us_per_req_ci95, 5, "at most"),
    ],
    [
      "observe.count_error",
      pct(r.count_error),
      `${r.recorded} recorded of ${r.sent} sent`,
      "",
      "≤ 1 %",
      check(r.count_error <= 0.01),
    ],
    [
      "observe.p90_error (edge p90 vs client p90, worst pair)",
      pct(r.p90_error),
      r.p90_pairs.map((p) => `${p.pair} ${p.client_ms}/${p.edge_ms ?? "–"} ms`).join(", "),
      "",
      "≤ 10 %",
      check(r.p90_error <= 0.1),
    ],
  ];
}
