import type { HealthStatus } from "../core/index.js";

/** What a checker writes to its health key. */
export interface PublishedHealth {
  readonly status: HealthStatus;
  readonly p90Ms?: number;
  /** Probes behind `p90Ms`; absent when the check URL reported the figure itself. */
  readonly samples?: number;
}

/** A p90 that moves by more than this share of the last written one is rewritten. */
export const P90_REWRITE_SHARE = 0.1;

/**
 * …and by more than this many ms: a fast pool's 10 % is a few tens of ms, which a loaded checker
 * host's own scheduling adds to a probe now and then (docs/reference.md §6).
 */
export const P90_REWRITE_MIN_MS = 50;

/**
 * The key's JSON value. `samples` goes only to a checker's own key (`health/{pool}/{checker}`):
 * a plain `health/{pool}` holds `status` and `p90_ms` only.
 */
export function healthValue(h: PublishedHealth, withSamples: boolean): string {
  return JSON.stringify({
    status: h.status,
    ...(h.p90Ms !== undefined ? { p90_ms: h.p90Ms } : {}),
    ...(withSamples && h.samples !== undefined ? { samples: h.samples } : {}),
  });
}

/**
 * Whether `next` must be written over `written` (docs/reference.md §6): the status changed, a
 * p90 appeared or went, or it moved by more than 10 % of the written figure and by more than
 * {@link P90_REWRITE_MIN_MS}. Anything else (a new sample count, a smaller move) is not worth an
 * etcd write.
 */
export function needsRewrite(written: PublishedHealth | null, next: PublishedHealth): boolean {
  if (written === null || written.status !== next.status) return true;
  if (written.p90Ms === undefined || next.p90Ms === undefined) return written.p90Ms !== next.p90Ms;
  const moved = Math.abs(next.p90Ms - written.p90Ms);
  return moved > P90_REWRITE_SHARE * written.p90Ms && moved > P90_REWRITE_MIN_MS;
}
