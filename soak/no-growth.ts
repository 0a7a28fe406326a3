import { AGGREGATOR_KEPT_MINUTES, SAMPLE_EVERY_SECONDS } from "./layout.js";
import { type Figure, type Sample, seriesKind } from "./samples.js";
import { fitSlope, type SlopeFit } from "./slope.js";

/**
 * The goal of one figure over the second half of the run:
 * - `rate`: the slope must not be above `maxPerHour` (units of the figure per hour). It fails
 *   when the whole 95 % interval lies above the goal, and, for a series spanning less than
 *   `resolvedSpanSeconds`, the line rises by more than `minRateRise` over it (a few minutes
 *   cannot resolve 1 MiB/h: only gross growth fails there). Memory saws up between
 *   collections and spikes for a sample while a poll or a compile holds native memory: a series
 *   is fitted through each bin's lowest sample (the floor the collector returns to), bins of
 *   `floorBinSeconds`, or a sixth of a series spanning less than 6 of them as long as that
 *   holds `minFloorBinSeconds`; a shorter one on every sample.
 * - `flat`: the figure must not grow. It fails when the 95 % interval of the slope excludes 0
 *   (growth, not noise) and both the line and the figure itself (its range over the window)
 *   rise by more than `tolerance`: a step of `tolerance` late in the window tilts the line
 *   further than the figure moved. With `plateauAge`, only samples of at least that age count.
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
      /**
       * Samples of a process younger than this (s) are left out: the figure rises to a plateau
       * by design until then (the aggregator's storage fills its 16 one-minute buckets).
       */
      readonly plateauAge?: number;
    };

const NODE = ["pusher", "heartbeat", "observer"];

/**
 * The goals of issue 27 (soak/README.md). workerd's RSS is recorded, not judged: under
 * Miniflare it grows with every request even for a Worker that only returns "ok" (the local
 * runtime's cost, not the Worker's); the Worker's own memory is its isolate's heap (`worker`).
 */
export const GROWTH_GOALS: readonly GrowthGoal[] = [
  // RSS less its file pages (proc-stats.ts): the node binary's code pages in as paths first run.
  { figure: "anon_mib", kind: "rate", maxPerHour: 1, unit: "MiB", kinds: NODE },
  { figure: "heap_mib", kind: "rate", maxPerHour: 1, unit: "MiB", kinds: [...NODE, "worker"] },
  { figure: "fds", kind: "flat", tolerance: 2, kinds: NODE },
  // An etcd member's connections to the other members are rafthttp's: it opens and closes its
  // streams, pipelines and probes itself as members come and go (soak/README.md).
  { figure: "fds_less_peers", kind: "flat", tolerance: 2, kinds: ["etcd"] },
  // workerd keeps a connection to each origin it fetched from lately (20 pools) besides the
  // clients' (9 at most): those come and go by the dozen. Leaking one per thousand requests
  // would still be ~170 an hour.
  { figure: "fds", kind: "flat", tolerance: 32, kinds: ["workerd"] },
  { figure: "handles", kind: "flat", tolerance: 2, kinds: NODE },
  // One tab held, one reloaded every minute (ui-clients.ts): 1 or 2 open, never more.
  { figure: "ui_streams", kind: "flat", tolerance: 1, kinds: ["pusher"] },
  // Bounded label sets (a GC kind, a watch-restart reason) appear once, later in a run.
  // The observer's grow with the (country, pool) pairs viewers have used: recorded, not judged.
  { figure: "series", kind: "flat", tolerance: 4, kinds: ["pusher", "heartbeat"] },
  { figure: "leases_held", kind: "flat", tolerance: 1, kinds: ["cluster"] },
  { figure: "watchers", kind: "flat", tolerance: 1, kinds: ["cluster"] },
  { figure: "watch_streams", kind: "flat", tolerance: 1, kinds: ["cluster"] },
  // The observer's pairs with --min-samples requests in the current and previous minute: the
  // count saws with the minute by dozens (soak/README.md), so only a rise past 20 fails.
  { figure: "observed_keys", kind: "flat", tolerance: 20, kinds: ["cluster"] },
  // It fills for its 16 minutes, then holds: judged once workerd is a minute older than that.
  {
    figure: "do_storage_mib",
    kind: "flat",
    tolerance: 1,
    kinds: ["aggregator"],
    plateauAge: (AGGREGATOR_KEPT_MINUTES + 1) * 60,
  },
];

/** How the second half is cut. */
export interface WindowOptions {
  /** Seconds of the measured run (the window is its second half). */
  readonly durationSeconds: number;
  /** Samples of a process younger than this are warm-up and left out. */
  readonly warmupSeconds: number;
  /** Fewest samples a series needs in the window to be judged. */
  readonly minSamples: number;
  /** Least rise (figure units) a `rate` goal needs to fail over a short series: its noise floor. */
  readonly minRateRise: number;
  /** A series spanning at least this many seconds is judged on its interval alone. */
  readonly resolvedSpanSeconds: number;
  /** Bin width (s) whose lowest sample a `rate` fit uses, when the window holds 6 bins. */
  readonly floorBinSeconds: number;
  /**
   * Narrowest bin (s) of a shorter series' floor fit (a sixth of its span): two samples, so
   * that each floor leaves a one-sample spike out.
   */
  readonly minFloorBinSeconds: number;
  /**
   * By kind of process, the age (s) before which its memory still settles. A `rate` series whose
   * settled samples span `resolvedSpanSeconds` is fitted on those alone; otherwise, when it has
   * a younger sample, it is judged as a short one (only a rise over `minRateRise` fails).
   */
  readonly settlingSeconds: Readonly<Record<string, number>>;
}

/** The bins of the `rate` goals' floor fits ({@link WindowOptions}). */
export const FLOOR_BINS: Pick<WindowOptions, "floorBinSeconds" | "minFloorBinSeconds"> = {
  floorBinSeconds: 60,
  minFloorBinSeconds: 2 * SAMPLE_EVERY_SECONDS,
};

/** Seconds of a process's life left out of its fits. */
export const WARMUP_SECONDS = 60;

/** A series spanning at least this many seconds is judged on its interval alone. */
export const RESOLVED_SPAN_SECONDS = 600;

/**
 * How a run of `seconds` is judged (soak/README.md, "No growth"); `settlingSeconds` as in
 * {@link WindowOptions}.
 */
export function windowOptions(
  seconds: number,
  settlingSeconds: Readonly<Record<string, number>> = {},
): WindowOptions {
  return {
    durationSeconds: seconds,
    warmupSeconds: WARMUP_SECONDS,
    minSamples: 6,
    // A busy pusher's heap saws by 6 MiB between collections.
    minRateRise: 10,
    resolvedSpanSeconds: RESOLVED_SPAN_SECONDS,
    ...FLOOR_BINS,
    settlingSeconds,
  };
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

/**
 * The lowest sample of each `bin`-second bin (at the bin's middle), when the points span at
 * least 6 bins; else the points as they are. A sample on the far edge of the span counts in the
 * last whole bin.
 */
export function floorPoints(
  pts: ReadonlyArray<{ readonly x: number; readonly y: number }>,
  bin: number,
): Array<{ x: number; y: number }> {
  if (pts.length === 0) return [];
  const x0 = Math.min(...pts.map((p) => p.x));
  const x1 = Math.max(...pts.map((p) => p.x));
  if (x1 - x0 < 6 * bin) return pts.map((p) => ({ ...p }));
  // a last sample right on a bin's edge joins the bin before: alone, a spike would be its floor
  const last = Math.ceil((x1 - x0) / bin) - 1;
  const lows = new Map<number, number>();
  for (const p of pts) {
    const b = Math.min(Math.floor((p.x - x0) / bin), last);
    lows.set(b, Math.min(lows.get(b) ?? Number.POSITIVE_INFINITY, p.y));
  }
  return [...lows].map(([b, y]) => ({ x: x0 + (b + 0.5) * bin, y }));
}

/**
 * The points a `rate` series' fit runs through (see {@link GrowthGoal}): each bin's floor, bins
 * of `floorBinSeconds` or of a sixth of a shorter span as long as that holds
 * `minFloorBinSeconds`; else every point.
 */
export function ratePoints(
  pts: ReadonlyArray<{ readonly x: number; readonly y: number }>,
  o: Pick<WindowOptions, "floorBinSeconds" | "minFloorBinSeconds">,
): Array<{ x: number; y: number }> {
  if (pts.length === 0) return [];
  const xs = pts.map((p) => p.x);
  const span = Math.max(...xs) - Math.min(...xs);
  if (span >= 6 * o.floorBinSeconds) return floorPoints(pts, o.floorBinSeconds);
  return span / 6 >= o.minFloorBinSeconds ? floorPoints(pts, span / 6) : pts.map((p) => ({ ...p }));
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
    /** Series of a kind whose memory settles: their samples at least the settling age. */
    const settled = new Map<string, Array<{ x: number; y: number }>>();
    /** Series with samples left out as younger than the goal's `plateauAge`, and how many. */
    const rising = new Map<string, number>();
    for (const s of samples) {
      if (s.figure !== goal.figure || s.t < from || !goal.kinds.includes(seriesKind(s.series)))
        continue;
      if (s.age !== undefined && s.age < o.warmupSeconds) continue;
      if (goal.kind === "flat" && goal.plateauAge !== undefined && (s.age ?? 0) < goal.plateauAge) {
        rising.set(s.series, (rising.get(s.series) ?? 0) + 1);
        continue;
      }
      const pts = bySeries.get(s.series) ?? [];
      pts.push({ x: s.t, y: s.value });
      bySeries.set(s.series, pts);
      const settles = o.settlingSeconds[seriesKind(s.series)];
      if (settles === undefined || s.age === undefined) continue;
      const old = settled.get(s.series) ?? [];
      if (s.age >= settles) old.push({ x: s.t, y: s.value });
      settled.set(s.series, old);
    }
    for (const [series, n] of rising) {
      if (bySeries.has(series) || goal.kind !== "flat") continue;
      out.push({
        figure: goal.figure,
        series,
        status: "short",
        detail: `${n} samples, all younger than ${goal.plateauAge} s, while it rises to its plateau: not judged`,
        fit: null,
      });
    }
    for (const [series, every] of bySeries) {
      const old = goal.kind === "rate" ? settled.get(series) : undefined;
      const young = old !== undefined && old.length < every.length;
      const judgedOld = young && spans(old, o.resolvedSpanSeconds) && old.length >= o.minSamples;
      const all = judgedOld ? old : every;
      const pts = goal.kind === "rate" ? ratePoints(all, o) : all;
      const fit = all.length >= o.minSamples ? fitSlope(pts) : null;
      if (!fit) {
        out.push({
          figure: goal.figure,
          series,
          status: "short",
          detail: `${all.length} samples after warm-up in the second half (fewer than ${o.minSamples}): not judged`,
          fit: null,
        });
        continue;
      }
      const [lo, hi] = fit.ci95;
      if (goal.kind === "rate") {
        const perHour = fit.slope * 3600;
        const settling = young && !judgedOld;
        const short = settling || fit.spanSeconds < o.resolvedSpanSeconds;
        const floor = o.minRateRise;
        const fail = lo * 3600 > goal.maxPerHour && (!short || fit.rise > floor);
        out.push({
          figure: goal.figure,
          series,
          status: fail ? "fail" : "pass",
          detail: `${fmt(perHour)} ${goal.unit}/h (95 % ${fmt(lo * 3600)}…${fmt(hi * 3600)}; goal ≤ ${goal.maxPerHour}; rise ${fmt(fit.rise)} ${goal.unit} over ${fmt(fit.spanSeconds)} s${short ? `, noise floor ${floor}` : ""}${settling ? ", still settling" : ""}${judgedOld ? `, its ${all.length} settled samples` : ""}${pts.length < all.length ? `, fitted on ${pts.length} floors` : ""})`,
          fit,
        });
      } else {
        const fail = lo > 0 && Math.min(fit.rise, fit.range) > goal.tolerance;
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

/** Whether `pts` (in time order) span at least `seconds`. */
function spans(pts: readonly { x: number }[], seconds: number): boolean {
  const first = pts[0];
  const last = pts[pts.length - 1];
  return first !== undefined && last !== undefined && last.x - first.x >= seconds;
}
