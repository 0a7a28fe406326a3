import { z } from "zod";

const ratio = z.number().min(0).max(1);
const ms = z.number().nonnegative().nullable();

/** One (country, pool) row of `edgectl top`. */
export const TopRowShape = z.object({
  country: z.string(),
  pool: z.string().describe('the pool that answered; "-" when the edge answered before any pool'),
  requests_per_s: z.number().nonnegative().describe("the row's requests over the minutes summed"),
  error_ratio: ratio.describe(
    "origin_error, timeout, unreachable and edge_error over all requests (a 4xx is the viewer's)",
  ),
  ttfb_ms: z
    .object({ p50: ms, p90: ms })
    .describe("the viewers' time to first byte; null when no origin answered"),
  starved_ratio: ratio
    .nullable()
    .describe(
      "requests whose player reported buffer starvation over those that sent CMCD bs; null without any",
    ),
  checkers_p90_ms: ms.describe("the pool's checkers' p90 in etcd's health keys; null without one"),
});

/** `edgectl top [CC…] --edge URL -o json`: what viewers get per country and pool, now. */
export const TopShape = z
  .object({
    window_s: z.number().int().positive(),
    rows: z.array(TopRowShape).describe("sorted by country, then pool"),
  })
  .describe("top: what viewers get per country and pool");

/** One parsed `top` row. */
export type TopRow = z.output<typeof TopRowShape>;
/** The parsed `top` result. */
export type TopResult = z.output<typeof TopShape>;
