import type { Health, HealthStatus } from "./schema.js";

/** The checker name a pool's plain `health/{pool}` key counts as. */
export const PLAIN_CHECKER = "";

/** One live checker's report: its key's value (`checker` is "" for the plain `health/{pool}`). */
export interface CheckerReport {
  readonly checker: string;
  readonly status: HealthStatus;
  readonly p90_ms?: number | undefined;
  readonly samples?: number | undefined;
}

/**
 * A pool's health as its live checkers judge it (docs/reference.md §9): `healthy` when at least
 * `quorum` of them say so; `p90_ms` is the median of the healthy checkers' figures.
 */
export interface PoolHealth extends Health {
  /** Live checkers: their keys are present and valid. */
  readonly live: number;
  /** Live checkers that say `healthy`. */
  readonly healthyCheckers: number;
  /** Healthy checkers needed: `pool/` `quorum`, else a majority of the live ones. */
  readonly quorum: number;
  /** Every live checker's report, by checker name. */
  readonly checkers: readonly CheckerReport[];
}

/** The middle value (the mean of the two middle ones for an even count), rounded to 1 ms. */
export function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const m = s.length % 2 === 1 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
  return Math.round(m);
}

/**
 * Judges a pool from its live checkers' reports; `undefined` when none is live (the pool is then
 * unhealthy, as a missing key always was). Short of the quorum: `draining` when some checker says
 * draining and none says unhealthy, else `unhealthy`.
 */
export function judgePool(
  checkers: ReadonlyMap<string, Health>,
  quorum: number | undefined,
): PoolHealth | undefined {
  const live = checkers.size;
  if (live === 0) return undefined;
  const reports: CheckerReport[] = [];
  for (const [checker, h] of [...checkers].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    reports.push({ checker, status: h.status, p90_ms: h.p90_ms, samples: h.samples });
  }
  const healthy = reports.filter((r) => r.status === "healthy");
  const need = quorum ?? Math.floor(live / 2) + 1;
  const status: HealthStatus =
    healthy.length >= need
      ? "healthy"
      : reports.some((r) => r.status === "draining") &&
          reports.every((r) => r.status !== "unhealthy")
        ? "draining"
        : "unhealthy";
  const p90 = median(healthy.flatMap((r) => (r.p90_ms === undefined ? [] : [r.p90_ms])));
  return {
    status,
    ...(p90 === undefined ? {} : { p90_ms: p90 }),
    live,
    healthyCheckers: healthy.length,
    quorum: need,
    checkers: reports,
  };
}
