import {
  addCounts,
  type Canary,
  type CanarySideFigures,
  histogramQuantile,
  TTFB_BUCKETS_MS,
} from "../core/index.js";
import { KEPT_MINUTES } from "./minute-ledger.js";
import { type MinuteReading, minuteOf } from "./minute-reading.js";
import { ERROR_OUTCOMES } from "./observation-document.js";

/** What the two sides of a canary got over the countries and minutes both had viewers in. */
export interface CanaryFigures {
  readonly canary: CanarySideFigures;
  readonly stable: CanarySideFigures;
  /** The countries compared, sorted. */
  readonly countries: readonly string[];
  /** How many minutes had a country with viewers on both sides. */
  readonly minutes: number;
}

interface SideSum {
  requests: number;
  errors: number;
  readonly ttfb: number[];
}

const emptySum = (): SideSum => ({
  requests: 0,
  errors: 0,
  ttfb: new Array<number>(TTFB_BUCKETS_MS.length + 1).fill(0),
});

function figuresOf(s: SideSum): CanarySideFigures {
  const p90 = histogramQuantile(TTFB_BUCKETS_MS, s.ttfb, 0.9);
  return {
    samples: s.requests,
    error_ratio: s.requests > 0 ? Math.round((s.errors / s.requests) * 10_000) / 10_000 : 0,
    p90_ms: p90 === null ? null : Math.round(p90),
  };
}

/**
 * Both sides of `canary` compared over the same countries and minutes (docs/reference.md §13):
 * of the reading's one-minute rows since the canary started (at most the edge's kept minutes),
 * only the (minute, country) cells where both `{id}:canary` and `{id}:stable` had requests count,
 * summed per side over every pool the side's viewers reached; the histograms merge bucket by
 * bucket, so the p90 of a side is exact to a bucket.
 */
export function canaryFigures(reading: MinuteReading, canary: Canary): CanaryFigures {
  const from = Math.max(minuteOf(canary.started_at), reading.minute - KEPT_MINUTES);
  const canarySide = `${canary.id}:canary`;
  const stableSide = `${canary.id}:stable`;
  const total = { canary: emptySum(), stable: emptySum() };
  const countries = new Set<string>();
  let minutes = 0;
  for (const [minute, bucket] of reading.buckets) {
    if (minute < from || minute > reading.minute) continue;
    const cells = new Map<string, { canary: SideSum; stable: SideSum }>();
    for (const row of bucket.values()) {
      const side =
        row.side === canarySide ? "canary" : row.side === stableSide ? "stable" : undefined;
      if (side === undefined || row.requests === 0) continue;
      let cell = cells.get(row.country);
      if (!cell) {
        cell = { canary: emptySum(), stable: emptySum() };
        cells.set(row.country, cell);
      }
      const sum = cell[side];
      sum.requests += row.requests;
      sum.errors += ERROR_OUTCOMES.reduce((a, o) => a + (row.outcomes[o] ?? 0), 0);
      addCounts(sum.ttfb, row.ttfb);
    }
    let compared = false;
    for (const [country, cell] of cells) {
      if (cell.canary.requests === 0 || cell.stable.requests === 0) continue;
      compared = true;
      countries.add(country);
      for (const side of ["canary", "stable"] as const) {
        total[side].requests += cell[side].requests;
        total[side].errors += cell[side].errors;
        addCounts(total[side].ttfb, cell[side].ttfb);
      }
    }
    if (compared) minutes++;
  }
  return {
    canary: figuresOf(total.canary),
    stable: figuresOf(total.stable),
    countries: [...countries].sort(),
    minutes,
  };
}
