import { z } from "zod";

/** `edgectl unboost CC -o json`: what happened to the override. */
export const UnboostShape = z
  .object({
    key: z.string().describe("override/CC (relative)"),
    outcome: z
      .enum(["revoked", "deleted", "absent"])
      .describe("revoked: its lease was revoked; deleted: it had no lease; absent: nothing to do"),
    lease: z.string().nullable().describe("the revoked lease, in hex; null otherwise"),
  })
  .describe("unboost: the override removed");

/** The parsed `unboost` result. */
export type UnboostResult = z.output<typeof UnboostShape>;
