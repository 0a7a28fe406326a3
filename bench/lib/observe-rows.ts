import type { ObserveResult } from "../sections/viewers-observed.js";
import { check, checkCi, type Row } from "./row.js";

const pct = (v: number) => `${(v * 100).toFixed(2)} %`;

/** The table's `observe.*` rows (docs/reference.md §12): recording's CPU, count and p90 error. */
export function observeRows(r: ObserveResult | null): Row[] {
  if (!r) return [];
  return [
    [
      "observe.cpu_us_per_req (recording on − off, workerd, the recording loop)",
      `${r.cpu_us_per_req} µs (CI ${r.cpu_us_per_req_ci95[0]}–${r.cpu_us_per_req_ci95[1]})`,
      r.loop_off_us === undefined ? "" : `loop ${r.loop_off_us} µs off`,
      "",
      "≤ 5 µs",
      checkCi(r.cpu_us_per_req_ci95, 5, "at most"),
    ],
    ...(r.e2e_cpu_us_per_req !== undefined && r.e2e_cpu_us_per_req_ci95 !== undefined
      ? [
          [
            "observe.e2e_cpu_us_per_req (whole requests, on − off)",
            `${r.e2e_cpu_us_per_req} µs (CI ${r.e2e_cpu_us_per_req_ci95[0]}–${r.e2e_cpu_us_per_req_ci95[1]})`,
            `${r.cpu_us_off} µs off, ${r.cpu_us_on} µs on`,
            "",
            "",
            "",
          ] as const,
        ]
      : []),
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
    ...(r.slow_country
      ? [
          [
            "observe.slow_country_to_shed_ms (BR's origin slow → BR shed by viewers in KV)",
            `${r.slow_country.slow_country_to_shed_ms} ms`,
            `${r.slow_country.shed_share} % shed; ${r.slow_country.requests_per_s} requests/s; default observer`,
            "",
            "≤ 60 s",
            check(r.slow_country.slow_country_to_shed_ms <= r.slow_country.goal_ms),
          ] satisfies Row,
        ]
      : []),
  ];
}
