import type { WorkerLatencyResult } from "./worker-latency.js";
import type { MapRefreshResult } from "./worker-map-refresh.js";

/** `worker` in results.json. */
export interface WorkerOverheadResult extends WorkerLatencyResult {
  readonly map_refresh_ms: MapRefreshResult;
  readonly rps: number;
  readonly baseline_rps: number;
  /**
   * Median over the sliced cycles of routing req/s ÷ pass-through req/s in adjacent windows (no
   * goal: no Worker that meets the contract reaches the pass-through, see `floor_ratio`);
   * `ratio_ci95` its 95 % confidence interval.
   */
  readonly ratio: number;
  readonly ratio_ci95: readonly [number, number];
  /** Total routing requests ÷ total pass-through requests over the same windows. */
  readonly ratio_total: number;
  /** The cycles' median (= `ratio`) and extremes: how much the machine moved them. */
  readonly ratio_round_p50: number;
  readonly ratio_round_min: number;
  readonly ratio_round_max: number;
  /**
   * The control: a second pass-through side ÷ the pass-through, measured like `ratio`. Both do
   * the same work, so its distance from 1 is the method's resolution then and there.
   */
  readonly aa_ratio: number;
  readonly aa_ratio_ci95: readonly [number, number];
  /** The contract floor (`bench/workers/contract-floor.ts`): what docs/reference.md §4 alone costs. */
  readonly floor_rps: number;
  /** Contract floor ÷ pass-through, paired like `ratio`: the most any conforming Worker reaches. */
  readonly floor_ratio: number;
  readonly floor_ratio_ci95: readonly [number, number];
  /**
   * Routing ÷ contract floor, paired like `ratio`: what the routing Worker's own code costs
   * (goal ≥ 0.97, shown with its 95 % interval).
   */
  readonly ratio_vs_floor: number;
  readonly ratio_vs_floor_ci95: readonly [number, number];
  /**
   * The routing Worker signing every origin request (`ORIGIN_SIGNING_KEY`), with market
   * attributes on every route (as all sides here), ÷ the contract floor (goal ≥ 0.95).
   */
  readonly signed_ratio_vs_floor: number;
  readonly signed_ratio_vs_floor_ci95: readonly [number, number];
  /**
   * workerd CPU per request, signing minus not signing: the signature's cost (goal ≤ 30 µs), the
   * median over cycles of adjacent windows' difference, with its 95 % interval.
   */
  readonly sign_us: number;
  readonly sign_us_ci95: readonly [number, number];
  /** workerd CPU per request in each side's windows (its own cost; a neighbour moves it less). */
  readonly workerd_cpu_us_per_req: number;
  readonly baseline_workerd_cpu_us_per_req: number;
  readonly floor_workerd_cpu_us_per_req: number;
  /**
   * Routing minus contract floor workerd CPU per request (goal ≤ 20 µs): the median over cycles
   * of adjacent windows' difference, with its 95 % interval; `_total` is total over total.
   */
  readonly cpu_us_over_floor: number;
  readonly cpu_us_over_floor_ci95: readonly [number, number];
  readonly cpu_us_over_floor_total: number;
  /** Control minus pass-through, paired alike: the same work, so the CPU figures' resolution. */
  readonly aa_cpu_us: number;
  readonly aa_cpu_us_ci95: readonly [number, number];
  readonly signed_workerd_cpu_us_per_req: number;
  readonly p99_ms: number;
  readonly baseline_p99_ms: number;
  readonly rounds: number;
  readonly round_seconds: number;
  readonly connections: number;
  readonly errors: number;
  readonly workerd_rss_mb: number;
}
