import { type CompileOptions, compile, type Snapshot } from "../../core/index.js";
import { CliError } from "../cli/cli-error.js";
import { applyChangesToSnapshot } from "./edge-effect.js";
import type { KeyChange } from "./plan-diff.js";

/**
 * Problems the whole proposed state would have that the current one does not, as the pusher
 * would see them: e.g. an active override naming a pool the file removes.
 */
export function newProblems(
  snapshot: Snapshot,
  changes: readonly KeyChange[],
  opts: Omit<CompileOptions, "previous">,
): string[] {
  const before = new Set(compile(snapshot, opts).map.problems);
  return compile(applyChangesToSnapshot(snapshot, changes), opts).map.problems.filter(
    (p) => !before.has(p),
  );
}

/** Throws `invalid-input` (exit 1) when the proposed state would add problems. */
export function assertNoNewProblems(
  snapshot: Snapshot,
  changes: readonly KeyChange[],
  opts: Omit<CompileOptions, "previous">,
): void {
  const problems = newProblems(snapshot, changes, opts);
  if (problems.length === 0) return;
  throw new CliError(
    "invalid-input",
    `the whole proposed state is invalid (${problems.length} new problem${problems.length === 1 ? "" : "s"}); nothing written`,
    problems,
  );
}
