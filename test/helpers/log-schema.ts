import { z } from "zod";
import pkg from "../../package.json" with { type: "json" };

const SNAKE = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/;

/** One line of the shared log schema (adapters/logger.ts): pino's fields and the base fields. */
export const LogLineSchema = z
  .object({
    level: z.number().int(),
    time: z.iso.datetime(),
    msg: z.string().min(1),
    service: z.enum(["edge-pusher", "edge-heartbeat", "edge-observer", "edgectl"]),
    version: z.literal(pkg.version),
    instance: z.string().min(1),
    err: z
      .union([z.string(), z.object({ type: z.string(), message: z.string() }).loose()])
      .optional(),
  })
  .loose()
  .superRefine((line, ctx) => {
    for (const key of Object.keys(line)) {
      if (!SNAKE.test(key))
        ctx.addIssue({ code: "custom", message: `field "${key}" is not snake_case` });
    }
    if ("error" in line)
      ctx.addIssue({ code: "custom", message: 'an error logged as "error", not "err"' });
  });

/** A parsed log line. */
export type LogLine = z.output<typeof LogLineSchema>;

/** Parses JSON lines and checks each against the schema; throws naming the first bad line. */
export function parseLogLines(text: string): LogLine[] {
  return text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const r = LogLineSchema.safeParse(JSON.parse(l));
      if (!r.success) throw new Error(`log line breaks the schema: ${l}\n${r.error.message}`);
      return r.data;
    });
}
