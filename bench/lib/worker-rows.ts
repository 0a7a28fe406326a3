import { check, checkCi, ms, type Row } from "./row.js";
import type { TableInput } from "./table.js";

const ci = (v: readonly [number, number]) => `${v[0]}–${v[1]}`;

/** The table's Worker rows: throughput, weighted split, bundle, latency, map refresh. */
export function workerRows(w: TableInput["worker"]): Row[] {
  if (!w) return [];
  const out: Row[] = [];
  if (w.rps !== undefined && w.ratio !== undefined && w.p99_ms && w.baseline_p99_ms) {
    out.push([
      "Worker throughput vs pass-through",
      `${w.rps} req/s`,
      `${w.baseline_rps} req/s pass-through`,
      `${w.ratio}× (control ${w.aa_ratio ?? "–"}×)`,
      "",
      "",
    ]);
    if (w.ratio_vs_floor !== undefined && w.ratio_vs_floor_ci95)
      out.push([
        "Worker throughput vs contract floor (attrs)",
        `${w.rps} req/s`,
        `${w.floor_rps} req/s floor (${w.floor_ratio}× pass-through)`,
        `${w.ratio_vs_floor}× (CI ${ci(w.ratio_vs_floor_ci95)})`,
        "ratio ≥ 0.97",
        checkCi(w.ratio_vs_floor_ci95, 0.97, "at least"),
      ]);
    if (w.cpu_us_over_floor !== undefined)
      out.push([
        "Worker CPU over contract floor (workerd)",
        `${w.cpu_us_over_floor} µs${w.cpu_us_over_floor_ci95 ? ` (CI ${ci(w.cpu_us_over_floor_ci95)})` : ""}`,
        `${w.floor_workerd_cpu_us_per_req} µs floor, ${w.workerd_cpu_us_per_req} µs routing`,
        w.aa_cpu_us === undefined ? "" : `control − pass ${w.aa_cpu_us} µs`,
        "≤ 20 µs",
        w.cpu_us_over_floor_ci95
          ? checkCi(w.cpu_us_over_floor_ci95, 20, "at most")
          : check(w.cpu_us_over_floor <= 20),
      ]);
    if (
      w.signed_ratio_vs_floor !== undefined &&
      w.signed_ratio_vs_floor_ci95 &&
      w.sign_us !== undefined
    )
      out.push(
        [
          "Worker signing + attrs vs contract floor",
          `${w.signed_ratio_vs_floor}×`,
          `${w.floor_rps} req/s floor`,
          `${w.signed_ratio_vs_floor}× (CI ${ci(w.signed_ratio_vs_floor_ci95)})`,
          "ratio ≥ 0.95",
          checkCi(w.signed_ratio_vs_floor_ci95, 0.95, "at least"),
        ],
        [
          "Worker signature cost (workerd CPU)",
          `${w.sign_us} µs${w.sign_us_ci95 ? ` (CI ${ci(w.sign_us_ci95)})` : ""}`,
          `${w.workerd_cpu_us_per_req} µs unsigned`,
          "",
          "≤ 30 µs",
          w.sign_us_ci95 ? checkCi(w.sign_us_ci95, 30, "at most") : check(w.sign_us <= 30),
        ],
      );
    out.push([
      "Worker p99 latency",
      ms(w.p99_ms),
      `${ms(w.baseline_p99_ms)} pass-through`,
      `${(w.p99_ms / w.baseline_p99_ms).toFixed(2)}×`,
      "",
      w.errors ? `${w.errors} errors` : "",
    ]);
  }
  const mem = w.memory;
  if (mem)
    out.push([
      "Worker memory vs pass-through (same workerd, same load)",
      `${mem.rss_kib_per_1k_routing} KiB RSS / 1k req, heap ${mem.heap_mb_routing ?? "?"} MiB`,
      `${mem.rss_kib_per_1k_pass} KiB / 1k req, heap ${mem.heap_mb_pass ?? "?"} MiB pass-through`,
      `workerd ${mem.rss_mb_start} → ${mem.rss_mb_end} MiB`,
      "",
      "",
    ]);
  if (w.weighted_ratio !== undefined)
    out.push([
      "Worker throughput, weighted route",
      `${w.weighted_rps} req/s`,
      `${w.plain_rps} req/s plain route`,
      `${w.weighted_ratio}× (control ${w.weighted_aa_ratio ?? "–"}×)`,
      "ratio ≥ 0.95",
      check(w.weighted_ratio >= 0.95),
    ]);
  if (w.bundle_kib !== undefined && w.bundle_gzip_kib !== undefined)
    out.push([
      "Worker bundle (wrangler --dry-run) / gzip",
      `${w.bundle_kib} / ${w.bundle_gzip_kib} KiB`,
      "",
      "",
      "≤ 64 / ≤ 35 KiB",
      check(w.bundle_kib <= 64 && w.bundle_gzip_kib <= 35),
    ]);
  const l = w.latency_ms;
  const b = w.baseline_latency_ms;
  const over = w.latency_overhead_p99_ms;
  if (l && b && over !== undefined)
    out.push([
      "Worker latency p50 / p99 (map every 1 s, KV 50 ms)",
      `${ms(l.p50)} / ${ms(l.p99)}`,
      `${ms(b.p50)} / ${ms(b.p99)} pass-through`,
      `p99 ${over < 0 ? "−" : "+"} ${ms(Math.abs(over))}`,
      "p99 overhead ≤ 5 ms",
      check(over <= 5),
    ]);
  const m = w.map_refresh_ms;
  if (m)
    out.push([
      `map parse + validate, 252 routes p50 / max (n=${m.runs})`,
      `${m.p50.toFixed(2)} ms / ${m.max.toFixed(2)} ms`,
      "",
      "",
      "p50 ≤ 2 ms",
      check(m.p50 <= 2),
    ]);
  return out;
}
