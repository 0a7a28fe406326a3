import { z } from "zod";

/** Largest p90 an observation may carry (ms): the edge's histogram ends at 30 s. */
export const MAX_OBSERVED_P90_MS = 600_000;

/**
 * `observed/{CC}/{pool}`: what the country's viewers of the pool got over the observer's window
 * (docs/reference.md §12), written by `edgectl observe` under its own lease: the p90 time to
 * first byte in ms, the requests behind it, the share of them that failed, and (when the edge
 * counted cache results, §14) the share of those that the edge cache answered (`HIT`).
 */
export const ObservedSchema = z
  .object({
    p90_ms: z.number().nonnegative().max(MAX_OBSERVED_P90_MS).finite(),
    samples: z.number().int().nonnegative(),
    error_ratio: z.number().min(0).max(1),
    hit_ratio: z.number().min(0).max(1).optional(),
  })
  .strict();
export type Observed = z.output<typeof ObservedSchema>;
