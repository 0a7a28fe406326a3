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
            viewers: z
              .boolean()
              .optional()
              .describe("each country's own viewers' p90 sheds that country by slow_ms (§12)"),
          }),
        ),
        countries: z.record(z.string(), RuleShape),
        fences: z
          .record(
            z.string(),
            z.object({
              countries: z.array(z.string()),
              continents: z.array(z.string()),
              regions: z.array(z.string()),
              floor: z.string(),
            }),
          )
          .optional()
          .describe("fence/{name} values (docs/reference.md §10); absent when there are none"),
      })
      .describe("a desired-state document: `apply` of it (as a .json file) changes nothing"),
    not_exported: z
      .array(z.string())
      .describe(
        "pool/, country/ and fence/ keys left out because they are invalid, with the problem",
      ),
  })
  .describe("export: the current intent");

/** The parsed `export` result. */
export type ExportResult = z.output<typeof ExportShape>;
