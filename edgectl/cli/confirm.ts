import { createInterface } from "node:readline/promises";
import type { CliIo } from "./cli-io.js";

/** Asks a yes/no question; anything but y/yes (end of input, an abort) is no. */
export async function confirm(io: CliIo, question: string): Promise<boolean> {
  if (!io.stdin) return false;
  const rl = createInterface({ input: io.stdin, terminal: false });
  const closed = new Promise<string>((resolve) => rl.once("close", () => resolve("")));
  try {
    io.stdout.write(`${question} [y/N] `);
    const answer = await Promise.race([
      rl.question("", io.signal ? { signal: io.signal } : {}),
      closed,
    ]);
    return /^(y|yes)$/i.test(answer.trim());
  } catch {
    return false;
  } finally {
    rl.close();
  }
}
