import { z } from "zod";

/** `edgectl purge URL… -o json`: what the location that answered removed. */
export const PurgeShape = z
  .object({
    purged: z.array(
      z.object({
        url: z.string(),
        edge: z.string().describe("the edge's origin the purge was sent to (never the token)"),
        location: z
          .string()
          .nullable()
          .describe(
            "the Cloudflare location (colo) that answered; only its cache was purged. null under workerd locally",
          ),
        removed: z
          .number()
          .int()
          .describe("copies removed there, one per market the map keys on; 0: it held none"),
      }),
    ),
  })
  .describe("purge: each URL's copies removed from the location that answered");

/** The parsed `purge` result. */
export type PurgeResult = z.output<typeof PurgeShape>;
