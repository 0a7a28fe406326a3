import { z } from "zod";
import { OBSERVATION_WINDOW_S, TTFB_BUCKETS_MS } from "../core/index.js";

const count = z.number().int().nonnegative();
const ms = z.number().nonnegative().finite().nullable();

/**
 * A label from the edge (a country, a pool or an outcome class): short, and of characters that
 * are safe in a Prometheus label, a log line and, once checked as a name, an etcd key.
 */
const label = z
  .string()
  .max(63)
  .regex(/^[A-Za-z0-9_-]*$/, "must be letters, digits, - or _");

/**
 * One (minute, country, pool, canary side) row of the edge's observations with `by=minute`
 * (docs/reference.md §12): the minute's counts and its time-to-first-byte histogram over the
 * shared bounds `TTFB_BUCKETS_MS`. Fields the observer does not use are ignored.
 */
export const MinuteRowSchema = z.object({
  country: label,
  pool: label,
  minute: z.iso.datetime({ offset: true }),
  requests: count,
  outcomes: z.record(label, count),
  /** Requests by edge cache result (docs/reference.md §14); absent from an edge that does not count them. */
  cache: z.record(label, count).optional(),
  failovers: count,
  ttfb_counts: z
    .array(count)
    .length(TTFB_BUCKETS_MS.length + 1, "must have one count per bucket of TTFB_BUCKETS_MS"),
  ttfb_sum_ms: z.number().nonnegative().finite(),
  ttfb_ms: z.object({ p50: ms, p90: ms, p99: ms }),
  starved: count,
  /** The canary side of a changed route's requests (docs/reference.md §13); absent otherwise. */
  side: z
    .string()
    .regex(/^c[0-9]{1,15}:(canary|stable)$/, "must be {id}:canary or {id}:stable")
    .optional(),
  /** Requests whose player sent CMCD `bs` at all: the starvation ratio's denominator. */
  cmcd_requests: count.optional(),
});
export type MinuteRow = z.output<typeof MinuteRowSchema>;

/**
 * `GET /__edge/observations?window=SECONDS&by=minute`'s answer: the window, the minutes it
 * covers (`since` to `until`) and a row per (minute, country, pool).
 */
export const ObservationDocumentSchema = z.object({
  window_s: z.number().int().positive().max(OBSERVATION_WINDOW_S.max),
  since: z.iso.datetime({ offset: true }),
  until: z.iso.datetime({ offset: true }),
  rows: z.array(MinuteRowSchema),
});
export type ObservationDocument = z.output<typeof ObservationDocumentSchema>;

/**
 * The outcome classes that count against a pool: its 5xx, timeouts, refusals and the edge's own
 * 5xx. A 4xx is the viewer's error, not the pool's.
 */
export const ERROR_OUTCOMES: readonly string[] = [
  "origin_error",
  "timeout",
  "unreachable",
  "edge_error",
];
