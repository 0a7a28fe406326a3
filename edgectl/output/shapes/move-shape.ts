import { z } from "zod";
import { ApplyShape } from "./apply-shape.js";

/**
 * `edgectl move CC[,CC…] --to POOL --yes -o json`: what was committed, as `apply` reports it
 * (the plan and its notes went to stderr). Failures are the error shape with `apply`'s exit codes.
 */
export const MoveShape = ApplyShape.omit({ file: true })
  .extend({
    targets: z
      .array(z.string())
      .describe("the rule keys moved, as given: country/CC or continent/K, deduplicated"),
    to: z.string().describe("the new primary pool"),
    notes: z
      .array(z.string())
      .describe("what the diff does not show: dropped weights, a live override that still wins"),
  })
  .describe("move: the committed rebalance");

/** The parsed `move` result. */
export type MoveResult = z.output<typeof MoveShape>;
