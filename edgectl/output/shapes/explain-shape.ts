import { z } from "zod";
import { PoolHealthShape, RouteShape, RuleShape, ShareShape } from "./common-shapes.js";

const common = {
  revision: z.number().int().describe("the etcd revision explained"),
  epoch: z.number().int(),
  rule_key: z
    .string()
    .nullable()
    .describe("the key whose rule was walked: override/CC, country/CC, continent/K, override/K"),
  rule: RuleShape.nullable(),
  split: z.array(ShareShape).describe("viewers per pool: the weighted split, else 100 on one pool"),
  reasons: z.array(z.string()).describe("why, one step per line"),
  problems: z.array(z.string()).describe("compile problems of the keys involved"),
};

/** `edgectl explain CC -o json`: how a country (or `_default`) is routed now, and why. */
export const ExplainCountryShape = z
  .object({
    kind: z.literal("country"),
    country: z.string().describe("CC or _default"),
    ...common,
    chain: z
      .array(
        z.object({
          pool: z.string(),
          defined: z.boolean(),
          health: z.enum(["healthy", "draining", "unhealthy", "missing"]),
          origin: z.string(),
          takes_traffic: z.boolean(),
          report: PoolHealthShape.describe("its checkers, p90, watermarks and shed share"),
        }),
      )
      .describe("the rule's pools with what the compiler saw for each"),
    route: RouteShape.describe("exactly the compiled route the Worker uses"),
    source: z
      .string()
      .describe("the route's source: country/CC, continent/K, override/CC, override/K or floor"),
    fence: z
      .object({
        name: z.string(),
        regions: z.array(z.string()),
        floor: z.string(),
        removed: z
          .array(z.string())
          .describe("pools the walked rules name outside the fence: never used for the country"),
      })
      .nullable()
      .describe("the fence that covers the country (docs/reference.md §10); null when none"),
    viewers: z
      .array(
        z.object({
          pool: z.string(),
          p90_ms: z.number().describe("the viewers' p90 time to first byte"),
          samples: z.number().int().describe("the requests behind it"),
          error_ratio: z.number(),
          checkers_p90_ms: z
            .number()
            .nullable()
            .describe("the pool's checkers' p90 beside it; null without one"),
        }),
      )
      .describe("what its viewers get per pool: observed/CC/POOL as the observer wrote it"),
  })
  .describe("explain CC");

/** `edgectl explain EU -o json`: what a continent's rule does now and which countries it covers. */
export const ExplainContinentShape = z
  .object({
    kind: z.literal("continent"),
    continent: z.enum(["AF", "AN", "AS", "EU", "NA", "OC", "SA"]),
    ...common,
    route: RouteShape.nullable().describe("the compiled route of the countries it covers"),
    source: z
      .string()
      .nullable()
      .describe("the source of that route: continent/K, override/K, override/continent/K or floor"),
    covers: z.array(z.string()).describe("countries the continent's rule (or override) routes"),
    own_rule: z.array(z.string()).describe("its countries routed by a rule of their own"),
    follows_default: z.array(z.string()).describe("its countries that follow _default"),
  })
  .describe("explain K (a continent: EU, AN, OC, continent/NA)");

/** `edgectl explain -o json`: one of the two, by `kind`. */
export const ExplainShape = z
  .discriminatedUnion("kind", [ExplainCountryShape, ExplainContinentShape])
  .describe("explain: a country's or a continent's routing now, and why");

/** The parsed `explain` result. */
export type ExplainResult = z.output<typeof ExplainShape>;
