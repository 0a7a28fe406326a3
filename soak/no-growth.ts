import { type Figure, type Sample, seriesKind } from "./samples.js";
import { fitSlope, type SlopeFit } from "./slope.js";

/**
 * The goal of one figure over the second half of the run:
 * - `rate`: the slope must not be above `maxPerHour` (units of the figure per hour). It fails
 *   when the whole 95 % interval lies above the goal, and the line rises by more than
 *   `minRise` over the window (a window of a few minutes cannot resolve 1 MiB/h; GC and JIT
 *   move RSS by megabytes).
 * - `flat`: the figure must not grow. It fails when the 95 % interval of the slope excludes 0
 *   (growth, not noise) and the line rises by more than `tolerance` over the window.
 */
export type GrowthGoal =
  | {
      readonly figure: Figure;
      readonly kind: "rate";
      readonly maxPerHour: number;
      readonly unit: string;
      readonly kinds: readonly string[];
    }
  | {
      readonly figure: Figure;
      readonly kind: "flat";
      readonly tolerance: number;
      readonly kinds: readonly string[];
    };

const PRODUCT = ["pusher", "heartbeat", "workerd"];

/** The goals of issue 27 (docs/reliability.md, "Soak"). */
export const GROWTH_GOALS: readonly GrowthGoal[] = [
  { figure: "rss_mib", kind: "rate", maxPerHour: 1, unit: "MiB", kinds: PRODUCT },
  { figure: "heap_mib", kind: "rate", maxPerHour: 1, unit: "MiB", kinds: PRODUCT },
  { figure: "fds", kind: "flat", tolerance: 2, kinds: [...PRODUCT, "etcd"] },
  { figure: "handles", kind: "flat", tolerance: 2, kinds: PRODUCT },
  // Bounded label sets (a GC kind, a watch-restart reason) appear once, later in a run.
  { figure: "series", kind: "flat", tolerance: 4, kinds: PRODUCT },
  { figure: "leases_held", kind: "flat", tolerance: 1, kinds: ["cluster"] },
  { figure: "watchers", kind: "flat", tolerance: 1, kinds: ["cluster"] },
  { figure: "watch_streams", kind: "flat", tolerance: 1, kinds: ["cluster"] },
];

/** How the second half is cut. */
export interface WindowOptions {
  /** Seconds of the measured run (the window is its second half). */
  readonly durationSeconds: number;
  /** Samples of a process younger than this are warm-up and left out. */
  readonly warmupSeconds: number;
  /** Fewest samples a series needs in the window to be judged. */
  readonly minSamples: number;
  /** Least rise (figure units) a `rate` goal needs to fail: a short window's noise floor. */
  readonly minRateRise: number;
}

/** One series judged against one goal. */
export interface GrowthVerdict {
  readonly figure: Figure;
  readonly series: string;
  readonly status: "pass" | "fail" | "short";
  /** The fit, per hour for `rate` goals and per window for `flat` ones, in words. */
  readonly detail: string;
  readonly fit: SlopeFit | null;
}

function fmt(v: number): string {
  return Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3);
}

/** Fits every series of every goal over the second half, excluding each process's warm-up. */
export function judgeGrowth(
  samples: readonly Sample[],
  goals: readonly GrowthGoal[],
  o: WindowOptions,
): GrowthVerdict[] {
  const from = o.durationSeconds / 2;
  const out: GrowthVerdict[] = [];
  for (const goal of goals) {
    const bySeries = new Map<string, Array<{ x: number; y: number }>>();
    for (const s of samples) {
      if (s.figure !== goal.figure || s.t < from || !goal.kinds.includes(seriesKind(s.series)))
        continue;
      if (s.age !== undefined && s.age < o.warmupSeconds) continue;
      const pts = bySeries.get(s.series) ?? [];
      pts.push({ x: s.t, y: s.value });
      bySeries.set(s.series, pts);
    }
    for (const [series, pts] of bySeries) {
      const fit = pts.length >= o.minSamples ? fitSlope(pts) : null;
      if (!fit) {
        out.push({
          figure: goal.figure,
          series,
          status: "short",
          detail: `${pts.length} samples after warm-up in the second half (fewer than ${o.minSamples}): not judged`,
          fit: null,
        });
        continue;
      }
      const [lo, hi] = fit.ci95;
      if (goal.kind === "rate") {
        const perHour = fit.slope * 3600;
        const fail = lo * 3600 > goal.maxPerHour && fit.rise > o.minRateRise;
        out.push({
          figure: goal.figure,
          series,
          status: fail ? "fail" : "pass",
          detail: `${fmt(perHour)} ${goal.unit}/h (95 % ${fmt(lo * 3600)}…${fmt(hi * 3600)}; goal ≤ ${goal.maxPerHour}; rise ${fmt(fit.rise)} ${goal.unit} over ${fmt(fit.spanSeconds)} s)`,
          fit,
        });
      } else {
        const fail = lo > 0 && fit.rise > goal.tolerance;
        out.push({
          figure: goal.figure,
          series,
          status: fail ? "fail" : "pass",
          detail: `rise ${fmt(fit.rise)} over ${fmt(fit.spanSeconds)} s (95 % ${fmt(lo * fit.spanSeconds)}…${fmt(hi * fit.spanSeconds)}; tolerance ${goal.tolerance}; range ${fmt(fit.range)})`,
          fit,
        });
      }
    }
  }
  return out;
}
