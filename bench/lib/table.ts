import type { BurstResult } from "../sections/burst.js";
import type { CanaryResult } from "../sections/canary.js";
import type { CheckerWritesResult } from "../sections/checker-writes.js";
import type { CliResult } from "../sections/cli.js";
import type { EdgeCacheResult } from "../sections/edge-cache.js";
import type { FailoverResult } from "../sections/failover.js";
import type { BlackholeStallResult } from "../sections/failover-blackhole.js";
import type { GrowthResult } from "../sections/growth.js";
import type { PropagationResult } from "../sections/propagation-result.js";
import type { PusherScaleResult } from "../sections/pusher-scale.js";
import type {
  NoisyWritesResult,
  ShedShareResult,
  SlowToShedResult,
} from "../sections/slow-pools.js";
import type { SteeringResult } from "../sections/steering.js";
import type { UiRenderResult } from "../sections/ui-render.js";
import type { ObserveResult } from "../sections/viewers-observed.js";
import type { WeightedSplitResult } from "../sections/weighted-split.js";
import type { WorkerBundleResult } from "../sections/worker-bundle.js";
import type { WorkerMemoryResult } from "../sections/worker-memory.js";
import type { WorkerOverheadResult } from "../sections/worker-overhead-result.js";
import type { WriteEconomyResult } from "../sections/write-economy.js";
import { canaryRows } from "./canary-rows.js";
import { growthRows } from "./growth-rows.js";
import type { MachineInfo } from "./machine.js";
import { observeRows } from "./observe-rows.js";
import { propagationRows } from "./propagation-rows.js";
import { pusherScaleRows } from "./pusher-scale-rows.js";
import { check, checkCi, ms, type Row, signed } from "./row.js";
import { steerRows } from "./steer-rows.js";
import { workerRows } from "./worker-rows.js";

/** results.json as bench/run.ts writes it: each section's result, null when it failed or did not run. */
export interface TableInput {
  readonly when: string;
  readonly quick: boolean;
  readonly duration_s: number;
  readonly machine: MachineInfo;
  /** The etcd every section ran on (`--etcd`, `ETCD_BIN`, else the newest of the matrix, else PATH's). */
  readonly etcd: { readonly version: string; readonly bin: string; readonly source: string };
  readonly propagation_ms: PropagationResult["propagation_ms"] | null;
  readonly edge_propagation_ms: PropagationResult["edge_propagation_ms"] | null;
  readonly burst: BurstResult | null;
  /** The failover and stall sections merged. */
  readonly failover_ms:
    | (Partial<FailoverResult> & {
        readonly blackhole_stalled_share?: number;
        readonly blackhole_stall?: BlackholeStallResult;
      })
    | null;
  /** The health section: checker writes, shed share, slow to shed, noisy writes. */
  readonly health: {
    readonly etcd_writes_per_checker_hour: number;
    readonly checker_writes: CheckerWritesResult;
    readonly slow_to_shed_ms: number;
    readonly slow_to_shed: SlowToShedResult;
    readonly shed_share_error: number;
    readonly shed_share: ShedShareResult;
    readonly kv_writes_per_hour_noisy: number;
    readonly noisy_writes: NoisyWritesResult;
  } | null;
  /** The worker (with its memory measurement), weighted and bundle sections merged. */
  readonly worker: Partial<
    WorkerOverheadResult & WeightedSplitResult & WorkerBundleResult & { memory: WorkerMemoryResult }
  > | null;
  readonly pusher_scale: PusherScaleResult | null;
  readonly growth: GrowthResult | null;
  readonly write_economy: WriteEconomyResult | null;
  readonly ui: UiRenderResult | null;
  readonly cli: CliResult | null;
  /** The edge cache: moves and a HIT's time to first byte. */
  readonly cache: EdgeCacheResult | null;
  /** The observe section: recording's CPU, count and p90 error (absent in older results). */
  readonly observe?: ObserveResult | null;
  /** The steer section: the steering endpoint's CPU next to routing's (absent in older results). */
  readonly steer?: SteeringResult | null;
  /** The canary section: a bad canary's rollback and blast radius (absent in older results). */
  readonly canary?: CanaryResult | null;
}

function rows(r: TableInput): Row[] {
  const out: Row[] = [];
  out.push(...propagationRows(r.propagation_ms, r.edge_propagation_ms));
  const b = r.burst;
  if (b) {
    out.push([
      `burst: ${b.changes} changes → KV final`,
      ms(b.settle_ms),
      `${ms(b.puts_ms)} (etcd accepting them)`,
      `${(b.settle_ms / b.puts_ms).toFixed(2)}×`,
      "",
      "",
    ]);
    out.push([
      "burst: KV writes of routes",
      String(b.kv_writes),
      `${b.changes} changes`,
      `${(b.changes / Math.max(1, b.kv_writes)).toFixed(0)}:1 coalesced`,
      "",
      "",
    ]);
    out.push([
      "burst: max writes/s to one key",
      String(b.max_writes_per_s_per_key),
      "KV limit 1",
      "",
      "≤ 1",
      check(b.max_writes_per_s_per_key <= 1),
    ]);
  }
  const f = r.failover_ms;
  if (
    f?.runs !== undefined &&
    f.p50 !== undefined &&
    f.max !== undefined &&
    f.ttl_s !== undefined &&
    f.over_ttl_p50 !== undefined
  )
    out.push([
      `failover after kill -9 p50 / max (n=${f.runs})`,
      `${ms(f.p50)} / ${ms(f.max)}`,
      `lease TTL ${f.ttl_s} s`,
      `TTL + ${(f.over_ttl_p50 / 1000).toFixed(2)} s`,
      "max ≤ TTL + 0.25 s",
      check(f.max <= f.ttl_s * 1000 + 250),
    ]);
  if (f?.revoke_max !== undefined && f.after_revoke_max !== undefined)
    out.push([
      "  kill → etcd deletes the health key p50 / max",
      `${ms(f.revoke_p50 ?? Number.NaN)} / ${ms(f.revoke_max)}`,
      "etcd expires leases every 500 ms",
      `pusher after it: max ${ms(f.after_revoke_max)}`,
      "",
      "",
    ]);
  const st = f?.blackhole_stall;
  if (f?.blackhole_stalled_share !== undefined && st) {
    const p = st.paced;
    out.push([
      `silent primary, one request a second (n=${p.requests}): requests over 1 s`,
      `${(f.blackhole_stalled_share * 100).toFixed(2)} %`,
      `back to back ${(st.back_to_back.stalled_share * 100).toFixed(2)} % of ${st.back_to_back.requests}`,
      `${p.stalled} stalled, ${p.hedged} hedged`,
      "≤ 2 %",
      check(f.blackhole_stalled_share <= 0.02),
    ]);
    out.push([
      "  worst request over the fallback's own time",
      ms(p.worst_over_fallback_ms),
      `fallback p50 ${ms(p.fallback_p50_ms)}; worst ${ms(p.worst_ms)}`,
      `ORIGIN_HEDGE_MS ${st.hedge_ms}`,
      `≤ ${st.hedge_ms + 100} ms`,
      check(p.worst_over_fallback_ms <= st.hedge_ms + 100),
    ]);
    out.push([
      "  what it cost the origins (silent / healthy)",
      `${p.hole_connections} / ${p.fallback_requests}`,
      `${p.requests} viewer requests`,
      `${p.hedged} hedged attempts, ${p.probes} probes`,
      "",
      "",
    ]);
  }
  const hc = r.health?.checker_writes;
  if (r.health?.etcd_writes_per_checker_hour !== undefined && hc)
    out.push([
      `etcd writes per checker-hour at a steady p90 (${hc.seconds} s, ${hc.probes} probes)`,
      `${r.health.etcd_writes_per_checker_hour}`,
      `p90 ${hc.p90_ms ?? "-"} ms; host timer floor ${hc.timer_floor ? `${hc.timer_floor.rewrites} rewrite(s), lateness p90 ${hc.timer_floor.lateness_p90_ms} ms` : "-"}`,
      `${hc.writes} write(s) with the registration`,
      "0 beyond the first",
      check(r.health.etcd_writes_per_checker_hour === 0),
    ]);
  const h = r.health;
  if (h?.slow_to_shed_ms !== undefined && h.slow_to_shed)
    out.push([
      `latency at 1.4 s → shed in KV (checker every ${h.slow_to_shed.interval_s} s)`,
      ms(h.slow_to_shed_ms),
      `${h.slow_to_shed.shed_share} % shed`,
      `${h.slow_to_shed.fast_samples_before} fast samples before`,
      `≤ ${ms(h.slow_to_shed.goal_ms)}`,
      check(h.slow_to_shed_ms <= h.slow_to_shed.goal_ms),
    ]);
  if (h?.shed_share_error !== undefined && h.shed_share)
    out.push([
      `shed share error over ${h.shed_share.viewers} viewers (points)`,
      `${h.shed_share_error}`,
      `compiled ${h.shed_share.compiled_share} %`,
      `measured ${h.shed_share.measured_share} %`,
      "≤ 3",
      check(h.shed_share_error <= 3),
    ]);
  if (h?.kv_writes_per_hour_noisy !== undefined && h.noisy_writes)
    out.push([
      `KV routes writes per hour, p90 ±20 % around a watermark (${h.noisy_writes.seconds} s)`,
      `${h.kv_writes_per_hour_noisy}`,
      `${h.noisy_writes.routes_writes} writes`,
      `${h.noisy_writes.shed_changes} shed changes`,
      "≤ 60",
      check(h.kv_writes_per_hour_noisy <= 60),
    ]);
  const bh = f?.blackhole;
  if (bh && f?.origin_timeout_ms !== undefined)
    out.push([
      `failover from a silent origin p50 / max (n=${bh.runs})`,
      `${ms(bh.p50)} / ${ms(bh.max)}`,
      `ORIGIN_TIMEOUT_MS ${f.origin_timeout_ms}; direct ${ms(bh.floor_p50)}`,
      `timeout + ${ms(bh.max - f.origin_timeout_ms)}`,
      "max ≤ timeout + 200 ms",
      check(bh.max <= f.origin_timeout_ms + 200),
    ]);
  out.push(...workerRows(r.worker));
  const c = r.cache;
  if (c) {
    out.push([
      `cache.origin_fetches_after_move (${c.segments} segments × boost, split, failover)`,
      String(c.origin_fetches_after_move),
      `warming: ${c.origin_fetches_warm}`,
      "",
      "= 0",
      check(c.origin_fetches_after_move === 0),
    ]);
    out.push([
      `cache.hit_ttfb_ratio (HIT ÷ pass-through, ${c.segment_bytes / 1024} KiB, n=${c.pairs})`,
      `${c.hit_ttfb_ratio}× [${c.hit_ttfb_ratio_ci95[0]}–${c.hit_ttfb_ratio_ci95[1]}]`,
      `pass-through p50 ${ms(c.pass_ttfb_p50_ms)}; HIT ${ms(c.hit_ttfb_p50_ms)}; Cache API alone ${ms(c.cache_floor_ttfb_p50_ms)} (${c.cache_floor_over_pass}×)`,
      `${c.hit_ttfb_ratio}×`,
      "≤ 1.1",
      checkCi(c.hit_ttfb_ratio_ci95, 1.1, "at most"),
    ]);
  }
  out.push(...observeRows(r.observe ?? null));
  out.push(...steerRows(r.steer ?? null));
  out.push(...canaryRows(r.canary ?? null));
  out.push(...pusherScaleRows(r.pusher_scale));
  out.push(...growthRows(r.growth));
  const k = r.cli;
  if (k) {
    out.push([
      `edgectl --help p50 (installed package, n=${k.runs})`,
      ms(k.help_ms),
      `node -e 0: ${ms(k.node_start_ms)}`,
      signed(k.help_ms - k.node_start_ms, "node"),
      "≤ node + 40 ms",
      check(k.help_ms <= k.node_start_ms + 40),
    ]);
    out.push([
      "edgectl status p50 (local stack)",
      ms(k.status_ms),
      `node -e 0: ${ms(k.node_start_ms)}; --help ${ms(k.help_ms)}${k.status_floor_ms === undefined ? "" : `; its reads alone ${ms(k.status_floor_ms)}`}`,
      signed(k.status_ms - k.node_start_ms, "node"),
      "≤ node + 150 ms",
      check(k.status_ms <= k.node_start_ms + 150),
    ]);
    out.push([
      "  production install (npm install --omit=dev)",
      `${k.install_mb} MiB`,
      `${k.install_packages} packages`,
      "",
      "",
      "",
    ]);
  }
  const x = r.write_economy;
  if (x)
    out.push([
      `writes/hour, pool flapping each minute (40 countries)`,
      `${x.map_writes_per_hour} (one map)`,
      `${x.per_key_writes_per_hour} (per-country keys)`,
      `1:${x.ratio}`,
      "",
      "",
    ]);
  return out;
}

/** The human-readable table: each figure beside its floor or baseline, ratio and goal. */
export function renderTable(r: TableInput): string {
  const header: Row = ["figure", "measured", "floor / baseline (same run)", "ratio", "goal", ""];
  const all = [header, ...rows(r)];
  const widths = header.map((_, i) => Math.max(...all.map((row) => row[i]?.length ?? 0)));
  const line = (row: Row) =>
    row
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  const m = r.machine;
  return [
    "",
    `edge-router bench — ${r.quick ? "quick" : "full"} run, ${r.when}, ${r.duration_s} s`,
    `${m.cores}× ${m.cpu}, node ${m.node}, load average ${m.loadavg_start} → ${m.loadavg_end ?? "?"}, etcd ${r.etcd.version}`,
    "",
    line(header),
    widths.map((w) => "-".repeat(w)).join("  "),
    ...rows(r).map(line),
    "",
  ].join("\n");
}
