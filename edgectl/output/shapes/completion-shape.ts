import { z } from "zod";

/** `edgectl completion SHELL -o json`: the script as a string (text mode prints it as is). */
export const CompletionShape = z
  .object({
    shell: z.enum(["bash", "zsh", "fish"]),
    script: z.string().describe("the completion script, generated from the command tree"),
  })
  .describe("completion: a shell completion script");
