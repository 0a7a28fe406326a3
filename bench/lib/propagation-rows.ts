import type { PropagationResult } from "../sections/propagation-result.js";
import { check, checkCi, ms, type Row, signed } from "./row.js";

/** The table's propagation rows: etcd → KV against the relay floor, and etcd → Worker. */
export function propagationRows(
  p: PropagationResult["propagation_ms"] | null,
  e: PropagationResult["edge_propagation_ms"] | null,
): Row[] {
  const out: Row[] = [];
  if (p) {
    out.push([
      `propagation etcd→KV p50 (n=${p.changes})`,
      ms(p.p50),
      `${ms(p.floor_p50)} (relay: watch ${p.floor_relay_watch_p50}, put ${p.floor_relay_put_p50})`,
      p.ratio_paired_ci95
        ? `${p.ratio_p50}× (paired ${p.ratio_paired_p50}×, CI ${p.ratio_paired_ci95.join("–")})`
        : `${p.ratio_p50}×`,
      "paired ratio ≤ 1.15",
      p.ratio_paired_ci95
        ? checkCi(p.ratio_paired_ci95, 1.15, "at most")
        : check(p.ratio_p50 <= 1.15),
    ]);
    out.push([
      "propagation etcd→KV p99 / max",
      `${ms(p.p99)} / ${ms(p.max)}`,
      `relay p99 ${ms(p.floor_p99)}`,
      signed(p.p99 - p.floor_p99, "floor"),
      "p99 ≤ floor + 30 ms",
      check(p.p99 <= p.floor_p99 + 30),
    ]);
    out.push(["  (pusher's own push log, p50)", ms(p.logged_p50), "", "", "", ""]);
    if (p.read_relay_p50 !== undefined)
      out.push([
        "  (relay + the pusher's etcd read)",
        "",
        ms(p.read_relay_p50),
        p.read_relay_paired_ci95
          ? `${(p.p50 / p.read_relay_p50).toFixed(2)}× (paired ${p.read_relay_paired_p50}×, CI ${p.read_relay_paired_ci95.join("–")})`
          : `${(p.p50 / p.read_relay_p50).toFixed(2)}×`,
        "",
        "",
      ]);
    out.push([
      "  (a watch and a KV put, each timed alone)",
      "",
      `${ms(p.floor_parts_p50 ?? Number.NaN)} (watch ${p.floor_etcd_watch_p50} + KV put ${p.floor_kv_put_p50})`,
      `${(p.p50 / (p.floor_parts_p50 ?? Number.NaN)).toFixed(2)}×`,
      "",
      "",
    ]);
  }
  if (e)
    out.push([
      "propagation etcd→Worker p50 / p99",
      `${ms(e.p50)} / ${ms(e.p99)}`,
      p ? ms(p.floor_p50) : "",
      `${e.ratio_p50}×`,
      "",
      "",
    ]);
  return out;
}
