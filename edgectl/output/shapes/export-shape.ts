import { z } from "zod";
import { RuleShape, SlowMsShape } from "./common-shapes.js";

/** `edgectl export -o json`: the current intent as a desired state (the text mode's YAML as JSON). */
export const ExportShape = z
  .object({
    prefix: z.string(),
    revision: z.number().int(),
    epoch: z.number().int(),
    state: z
      .object({
        pools: z.record(
          z.string(),
          z.object({
            origin: z.string(),
            region: z.string().optional(),
            quorum: z.number().int().optional().describe("healthy checkers the pool needs"),
            slow_ms: SlowMsShape.optional().describe("p90 watermarks between which it sheds"),
          }),
        ),
        countries: z.record(z.string(), RuleShape),
      })
      .describe("a desired-state document: `apply` of it (as a .json file) changes nothing"),
    not_exported: z
      .array(z.string())
      .describe("pool/ and country/ keys left out because they are invalid, with the problem"),
  })
  .describe("export: the current intent");

/** The parsed `export` result. */
export type ExportResult = z.output<typeof ExportShape>;
