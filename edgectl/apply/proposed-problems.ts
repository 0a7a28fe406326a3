import {
  type CompileOptions,
  compile,
  formatProblem,
  isFenceProblem,
  type Snapshot,
} from "../../core/index.js";
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
  opts: CompileOptions,
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
  opts: CompileOptions,
): void {
  const problems = newProblems(snapshot, changes, opts);
  if (problems.length === 0) return;
  const before = new Set(compile(snapshot, opts).problems.map(formatProblem));
  const fence = compile(applyChangesToSnapshot(snapshot, changes), opts)
    .problems.filter((p) => isFenceProblem(p) && !before.has(formatProblem(p)))
    .map(formatProblem);
  const n = problems.length;
  throw new CliError(
    "invalid-input",
    fence.length > 0
      ? `the proposed state would send a fenced country outside its fence (docs/reference.md §10); nothing written`
      : `the whole proposed state is invalid (${n} new problem${n === 1 ? "" : "s"}); nothing written`,
    [...fence, ...problems.filter((p) => !fence.includes(p))],
  );
}
