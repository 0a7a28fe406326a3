import { z } from "zod";
import { CanaryIdSchema } from "./canary-schema.js";

/** The key of the running canary's judgement, relative to the prefix (docs/reference.md §13). */
export const CANARY_JUDGEMENT_KEY = "canary/judgement";

/**
 * After this long without a fresh judgement the canary counts as frozen: it keeps its share and
 * is never promoted until a judge judges it again (docs/reference.md §13).
 */
export const CANARY_JUDGEMENT_STALE_MS = 60_000;

/** What one side of a canary got over the compared countries and minutes. */
export const CanarySideFiguresSchema = z
  .object({
    /** Requests of the side in the compared (minute, country) cells. */
    samples: z.number().int().nonnegative(),
    /** Share of them the pool or the edge failed (0–1). */
    error_ratio: z.number().min(0).max(1),
    /** Their p90 time to first byte in ms; `null` when none got a first byte. */
    p90_ms: z.number().nonnegative().max(600_000).nullable(),
  })
  .strict();
export type CanarySideFigures = z.output<typeof CanarySideFiguresSchema>;

/** Which way the gates point: not enough samples yet, all holding, or one failed. */
export const CanaryVerdictSchema = z.enum(["waiting", "passing", "failing"]);
export type CanaryVerdict = z.output<typeof CanaryVerdictSchema>;

/**
 * `canary/judgement`: the observer's (`edgectl observe`) latest judgement of the running canary's
 * gates, written under the judge's own lease, so it goes with the judge. Only the observer that
 * holds it judges and ends the canary.
 */
export const CanaryJudgementSchema = z
  .object({
    /** The canary judged (`canary/current`'s id). */
    id: CanaryIdSchema,
    verdict: CanaryVerdictSchema,
    judged_at: z.iso.datetime({ offset: true }),
    /** Since when every judgement passed; `null` unless the verdict is `passing`. */
    passing_since: z.iso.datetime({ offset: true }).nullable(),
    canary: CanarySideFiguresSchema,
    stable: CanarySideFiguresSchema,
    /** The countries and the number of minutes in which both sides had viewers. */
    countries: z.array(z.string().regex(/^[A-Z0-9]{2}$/)).max(300),
    minutes: z.number().int().nonnegative(),
    /** The gates' figures in one line, e.g. `p90 4096 ms > 1.25 × 128 ms + 50 ms`. */
    detail: z.string().max(1024),
    /** Who judges: the observer's host, process and edge. */
    judge: z.string().min(1).max(256),
  })
  .strict();
export type CanaryJudgement = z.output<typeof CanaryJudgementSchema>;
