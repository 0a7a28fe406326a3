import { z } from "zod";
import { KeyChangeShape, RouteShiftShape } from "./common-shapes.js";

/**
 * `edgectl apply FILE --yes -o json`: what was committed. Failures (1 invalid, 2 conflict,
 * 3 locked, 4 etcd unavailable, 5 outcome unknown) are the error shape with the same exit code.
 */
export const ApplyShape = z
  .object({
    file: z.string(),
    prefix: z.string(),
    applied: z.boolean().describe("false: etcd already held the file, nothing was written"),
    revision: z.number().int().describe("the etcd revision the plan was read at"),
    epoch: z.number().int().describe("the epoch now: bumped by the commit, else unchanged"),
    commit_revision: z
      .number()
      .int()
      .nullable()
      .describe("the revision of the commit; null when nothing was written"),
    changes: z.array(KeyChangeShape),
    effect: z.array(RouteShiftShape).describe("the edge effect under health at the read"),
  })
  .describe("apply: the committed change");

/** The parsed `apply` result. */
export type ApplyResult = z.output<typeof ApplyShape>;
