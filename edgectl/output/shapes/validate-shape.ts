import { z } from "zod";

/** `edgectl validate FILE -o json` when the file is valid (invalid: the error shape, exit 1). */
export const ValidateShape = z
  .object({
    file: z.string().describe("the path as given"),
    valid: z.literal(true),
    pools: z.array(z.string()).describe("pool names, sorted"),
    rules: z
      .array(z.string())
      .describe("rule keys as stored: country/CC, country/_default, continent/K; sorted"),
    fences: z.array(z.string()).describe("fence names (docs/reference.md §10), sorted"),
  })
  .describe("validate: the file is valid");

/** The parsed `validate` result. */
export type ValidateResult = z.output<typeof ValidateShape>;
