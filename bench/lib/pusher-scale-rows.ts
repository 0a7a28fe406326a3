import type { PusherScaleResult } from "../sections/pusher-scale.js";
import { check, ms, type Row } from "./row.js";

/** The table's pusher-scale rows: compile at 10,000 keys, RSS, sustained load, CPU, reads. */
export function pusherScaleRows(s: PusherScaleResult | null): Row[] {
  if (!s) return [];
  const out: Row[] = [];
  out.push([
    `compile ${s.keys} keys p50 / max`,
    `${ms(s.compile_ms_10k)} / ${ms(s.compile_ms_max)}`,
    `range read ${ms(s.range_read_ms)}`,
    `${(s.compile_ms_10k / s.range_read_ms).toFixed(2)}×`,
    "p50 ≤ 20 ms",
    check(s.compile_ms_10k <= 20),
  ]);
  out.push([
    "pusher RSS start / end / peak (built, cloudflare sink)",
    `${s.rss_mb_start} / ${s.rss_mb} / ${s.rss_mb_peak} MiB`,
    "REST stand-in, no Miniflare",
    "",
    "≤ 80 MiB",
    check(s.rss_mb <= 80),
  ]);
  if (s.rss_mb_rest !== undefined) {
    out.push(["  pusher RSS at rest (5 s after the load)", `${s.rss_mb_rest} MiB`, "", "", "", ""]);
  }
  const l = s.local_sink;
  if (l) {
    out.push([
      "  same, local sink (Miniflare in-process)",
      `${l.rss_mb_start} / ${l.rss_mb} / ${l.rss_mb_peak} MiB`,
      `+${l.sink_workerd_rss_mb} MiB sink workerd`,
      "",
      "",
      `${l.kv_writes} writes, max ${l.max_writes_per_s_per_key}/s/key`,
    ]);
  }
  out.push([
    `sustained ${s.changes} changes in ${s.sustained_seconds} s`,
    `${s.kv_writes} routes writes`,
    `${s.sustained_seconds} s at ≤ 1/s`,
    `max ${s.max_writes_per_s_per_key}/s/key`,
    "≤ 1",
    check(s.max_writes_per_s_per_key <= 1),
  ]);
  out.push([
    "  pusher CPU at 100 changes/s (KV settle after last change)",
    `${s.cpu_pct}% of a core`,
    ms(s.final_settle_ms),
    "",
    "≤ 15 %",
    check(s.cpu_pct <= 15),
  ]);
  if (s.reads_per_write !== undefined && s.reads_per_write !== null)
    out.push([
      "  range reads per routes write",
      String(s.reads_per_write),
      `${s.range_reads ?? "?"} reads, ${s.kv_writes} writes`,
      "",
      "≤ 1.5",
      check(s.reads_per_write <= 1.5),
    ]);
  return out;
}
