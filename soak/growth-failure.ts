import { FLOOR_BINS, type GrowthVerdict, ratePoints } from "./no-growth.js";
import type { Figure, Sample } from "./samples.js";
import { fitSlope } from "./slope.js";
import { socketGrowth } from "./socket-growth.js";

/**
 * What the fitted line of `figure` in `series` gains from `from` (s) on, fitted as the `rate`
 * goals are; null without samples.
 */
function fittedRise(
  samples: readonly Sample[],
  series: string,
  figure: Figure,
  from: number,
): number | null {
  const pts = samples
    .filter((s) => s.series === series && s.figure === figure && s.t >= from)
    .map((s) => ({ x: s.t, y: s.value }));
  return fitSlope(ratePoints(pts, FLOOR_BINS))?.rise ?? null;
}

/**
 * Where a Node process's anonymous memory rose: the rise of V8's committed heap and of its
 * external memory over the same window, fitted the same way; null when neither was recorded.
 */
export function memorySplit(
  samples: readonly Sample[],
  series: string,
  from: number,
): string | null {
  const v8 = fittedRise(samples, series, "heap_total_mib", from);
  const external = fittedRise(samples, series, "external_mib", from);
  if (v8 === null && external === null) return null;
  const mib = (x: number | null) => (x === null ? "not recorded" : `${x.toFixed(2)} MiB`);
  return `V8 heap committed rose ${mib(v8)}, external ${mib(external)}`;
}

/**
 * A failed no-growth verdict in words: for an etcd member's descriptors, the holders that rose;
 * for a process's anonymous memory, how much of the rise V8's heap and external memory were.
 */
export function growthFailure(g: GrowthVerdict, samples: readonly Sample[], from: number): string {
  const head = `no growth: ${g.figure} grew in ${g.series}: ${g.detail}`;
  if (g.figure === "fds" || g.figure === "fds_less_peers") {
    const holders = socketGrowth(samples, g.series, from);
    return holders
      ? `${head}; highest of the last 5 min against the first 5, by holder: ${holders}`
      : head;
  }
  if (g.figure === "anon_mib") {
    const split = memorySplit(samples, g.series, from);
    return split ? `${head}; of it, ${split}` : head;
  }
  return head;
}
