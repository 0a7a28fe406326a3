import { readFileSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";

/**
 * Rewrites docs/reference.md with `replace` (a generated section between its markers) and says
 * on stderr, under `label`, whether it changed.
 */
export function rewriteReference(label: string, replace: (markdown: string) => string): void {
  const path = resolve(import.meta.dirname, "../docs/reference.md");
  const before = readFileSync(path, "utf8");
  const after = replace(before);
  if (after !== before) writeFileSync(path, after);
  process.stderr.write(
    `${label}: docs/reference.md ${after === before ? "was up to date" : "updated"}\n`,
  );
}
