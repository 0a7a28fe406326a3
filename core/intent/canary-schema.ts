import { z } from "zod";

/** Default gates (docs/reference.md §13): errors ≤ stable + 1 point, p90 ≤ stable × 1.25 + 50 ms. */
export const DEFAULT_CANARY_GATES = {
  errors_pt: 1,
  p90_factor: 1.25,
  p90_plus_ms: 50,
  min_samples: 200,
} as const;

/** Default `--for`: how long the gates must hold before a canary is promoted (10 minutes). */
export const DEFAULT_CANARY_FOR_S = 600;

/** Largest canary share: a canary is a minority of a route's viewers. */
export const MAX_CANARY_SHARE = 50;

/** A canary's gates: what its viewers may get compared with the stable viewers. */
export const CanaryGatesSchema = z
  .object({
    /** Canary error ratio may exceed stable's by at most this many percentage points. */
    errors_pt: z.number().nonnegative().max(100).finite(),
    /** Canary p90 may be at most stable p90 × this factor + `p90_plus_ms`. */
    p90_factor: z.number().min(1).max(100).finite(),
    p90_plus_ms: z.number().nonnegative().max(600_000).finite(),
    /** Requests each side needs, in the same countries and minutes, before a gate is judged. */
    min_samples: z.number().int().min(1).max(100_000_000),
  })
  .strict();
export type CanaryGates = z.output<typeof CanaryGatesSchema>;

/** A canary id: `c` and the epoch that started it (it lands in `X-Edge-Canary`). */
export const CanaryIdSchema = z.string().regex(/^c[0-9]{1,15}$/);

/** One intent key the canary changes (relative to the prefix); `after` `null`: the key is removed. */
export const CanaryChangeSchema = z
  .object({
    key: z.string().regex(/^(pool|country|continent)\/[^/]+$/),
    before: z.string().nullable(),
    after: z.string().nullable(),
  })
  .strict();
export type CanaryChange = z.output<typeof CanaryChangeSchema>;

/**
 * `canary/current` (docs/reference.md §13): the routing change being tried on a share of its
 * routes' viewers. It exists only while the canary runs; promotion, roll-back and abort delete it
 * in the transaction that ends it (the audit record says which, and why).
 */
export const CanarySchema = z
  .object({
    id: CanaryIdSchema,
    /** The epoch the canary's own commit set (the stable intent's epoch is the same). */
    epoch: z.number().int().positive(),
    started_at: z.iso.datetime({ offset: true }),
    /** Percent of each changed route's viewers routed by the new intent (1–50). */
    share: z.number().int().min(1).max(MAX_CANARY_SHARE),
    /** Seconds the gates must hold before promotion. */
    for_s: z
      .number()
      .int()
      .min(1)
      .max(7 * 86_400),
    gates: CanaryGatesSchema,
    /** The proposed intent, as changes to the stable one, sorted by key. */
    changes: z.array(CanaryChangeSchema).min(1).max(10_000),
    by: z.string().min(1).max(256),
    reason: z.string().max(4096).nullable(),
  })
  .strict();
export type Canary = z.output<typeof CanarySchema>;
