import { z } from "zod";
import { FAILURE_CODES } from "../../cli/failure.js";

/**
 * `-o json` on any failure: the whole of stdout (heartbeat: its last line). `code` is stable and
 * typed (switch on it, never on `message`); the exit code is text mode's.
 */
export const ErrorShape = z
  .object({
    error: z.object({
      code: z.enum(FAILURE_CODES).describe("what failed; the exit code follows from it"),
      message: z.string().describe("one line, as text mode prints it after `edgectl: `"),
      details: z
        .array(z.string())
        .describe("further lines, e.g. one per validation problem, each naming its key"),
    }),
  })
  .describe("any command's failure");

/** The parsed error document. */
export type ErrorDocument = z.output<typeof ErrorShape>;
