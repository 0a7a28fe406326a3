import {
  type CompileOptions,
  fenceViolations,
  formatProblem,
  type Snapshot,
} from "../../core/index.js";
import { CliError } from "../cli/cli-error.js";

/**
 * Throws `invalid-input` (exit 1) when `after` has fence problems `before` has not (a rule that
 * would send a fenced country outside its fence, docs/reference.md §10); each line names the rule,
 * the country, the pool and the fence. `before` `null`: every fence problem of `after` counts.
 */
export function assertNoNewFenceViolations(
  before: Snapshot | null,
  after: Snapshot,
  opts: CompileOptions,
  what: string,
): void {
  const had = new Set(before ? fenceViolations(before, opts).map(formatProblem) : []);
  const added = fenceViolations(after, opts)
    .map(formatProblem)
    .filter((p) => !had.has(p));
  if (added.length === 0) return;
  throw new CliError(
    "invalid-input",
    `${what} would send a fenced country outside its fence (docs/reference.md §10); nothing written`,
    added,
  );
}
