import { z } from "zod";
import { ApplyShape } from "./apply-shape.js";

/**
 * `edgectl rollback EPOCH --yes -o json`: what was committed, as `apply` reports it. `applied`
 * is false when the intent already equals the intent after EPOCH (EPOCH the current one, say).
 */
export const RollbackShape = ApplyShape.omit({ file: true })
  .extend({
    to_epoch: z.number().int().describe("the epoch whose intent was restored"),
  })
  .describe("rollback: the restored intent, committed as a new epoch");

/** The parsed `rollback` result. */
export type RollbackResult = z.output<typeof RollbackShape>;
