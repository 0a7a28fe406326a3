import { z } from "zod";
import { KeyChangeShape, PoolHealthShape, RouteShiftShape } from "./common-shapes.js";

/**
 * `edgectl plan FILE -o json`: the diff against etcd and its edge effect under current health.
 * A proposed state with new problems is the error shape instead (`invalid-input`, exit 1).
 */
export const PlanShape = z
  .object({
    file: z.string(),
    prefix: z.string(),
    revision: z.number().int().describe("the etcd revision the plan was read at"),
    epoch: z.number().int().describe("etcd's epoch at that revision"),
    changes: z.array(KeyChangeShape).describe("sorted by key; empty: etcd already holds the file"),
    effect: z
      .array(RouteShiftShape)
      .describe("every route whose pool, origin or split of viewers would change, in shares"),
    shedding: z
      .array(PoolHealthShape)
      .describe("pools that would shed viewers after the changes, under current latency"),
    canary: z
      .object({
        share: z.number().int(),
        for_s: z.number().int(),
        gates: z.object({
          errors_pt: z.number(),
          p90_factor: z.number(),
          p90_plus_ms: z.number(),
          min_samples: z.number().int(),
        }),
        sides: z
          .array(
            z.object({
              country: z.string(),
              stable: z.object({ percent: z.number(), pool: z.string(), source: z.string() }),
              canary: z.object({ percent: z.number(), pool: z.string(), source: z.string() }),
            }),
          )
          .describe("each changed route: where its stable and its canary viewers go"),
      })
      .optional()
      .describe("with --canary only (docs/reference.md §13)"),
  })
  .describe("plan: what apply would change, and where traffic would move");

/** The parsed `plan` result. */
export type PlanResult = z.output<typeof PlanShape>;
