import { z } from "zod";

/** Most seconds `GET /__edge/observations?window=` covers: the edge keeps 15 one-minute buckets. */
export const MAX_WINDOW_SECONDS = 900;

const count = z.number().int().nonnegative();
const ms = z.number().nonnegative().finite().nullable().optional();

/**
 * A label from the edge (a country, a pool or an outcome class): short, and of characters that
 * are safe in a Prometheus label, a log line and, once checked as a name, an etcd key.
 */
const label = z
  .string()
  .max(63)
  .regex(/^[A-Za-z0-9_-]*$/, "must be letters, digits, - or _");

/** One (country, pool) row of the edge's observations (docs/reference.md §12). */
export const ObservationRowSchema = z.object({
  country: label,
  pool: label,
  requests: count,
  outcomes: z.record(label, count),
  failovers: count.default(0),
  ttfb_ms: z.object({ p50: ms, p90: ms, p99: ms }).nullable().optional(),
  starved: count.default(0),
  /** Requests whose player sent CMCD `bs` at all: the starvation ratio's denominator. */
  cmcd_requests: count.optional(),
  throughput_kbps_p50: z.number().nonnegative().finite().nullable().optional(),
});
export type ObservationRow = z.output<typeof ObservationRowSchema>;

/**
 * `GET /__edge/observations?window=SECONDS`'s answer: the window, its end, and a row per
 * (country, pool). Fields the edge may add later are ignored.
 */
export const ObservationDocumentSchema = z.object({
  window_s: z.number().int().positive().max(MAX_WINDOW_SECONDS),
  /** Start of the oldest minute summed: the window rounds out to whole minutes. */
  since: z.iso.datetime({ offset: true }).optional(),
  until: z.iso.datetime({ offset: true }),
  rows: z.array(ObservationRowSchema),
});
export type ObservationDocument = z.output<typeof ObservationDocumentSchema>;

/** The outcome classes whose requests have a time to first byte from an origin. */
export const TTFB_OUTCOMES: readonly string[] = ["ok", "client_error", "origin_error"];

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
