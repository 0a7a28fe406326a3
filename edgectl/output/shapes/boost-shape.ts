import { z } from "zod";
import { ShareShape } from "./common-shapes.js";

/** `edgectl boost CC --pool P --ttl D -o json`: the override written, its lease and its end. */
export const BoostShape = z
  .object({
    key: z.string().describe("override/CC, override/K or override/continent/K (relative)"),
    value: z
      .object({
        primary: z.string(),
        fallbacks: z.array(z.string()),
        weights: z.record(z.string(), z.number()).optional(),
        attrs: z
          .record(z.string(), z.string())
          .optional()
          .describe("--attr: market attributes that overlay the market's for the boost"),
        reason: z.string().optional(),
        expires_at: z.string().describe("ISO 8601: the compiled map stops using it then"),
      })
      .describe("the override as written"),
    split: z
      .array(ShareShape)
      .nullable()
      .describe("--percent: viewers per pool of the weighted override; else null"),
    split_base: z
      .string()
      .nullable()
      .describe("--percent: the rule the split was made from (country/DE, continent/EU, …)"),
    ttl: z.string().describe("--ttl as given"),
    lease: z.object({
      id: z.string().describe("decimal, as etcd's API gives it"),
      hex: z.string().describe("as etcdctl shows it"),
    }),
    expires_at: z.string(),
  })
  .describe("boost: the override written");

/** The parsed `boost` result. */
export type BoostResult = z.output<typeof BoostShape>;
