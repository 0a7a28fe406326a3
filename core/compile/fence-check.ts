import type { Problem } from "../intent/problem.js";
import type { Snapshot } from "../intent/routing-state.js";
import { compile } from "./compile.js";
import type { CompileOptions } from "./compile-options.js";

/** Problem codes of intent that a fence refuses (docs/reference.md §10). */
const FENCE_CODES: ReadonlySet<Problem["code"]> = new Set([
  "fence-crossing",
  "fence-overlap",
  "fence-floor",
]);

/** True for a problem the CLI refuses as a fence violation. */
export function isFenceProblem(p: Problem): boolean {
  return FENCE_CODES.has(p.code);
}

/**
 * Every fence problem of the intent in `snapshot`, as the pusher's compile reports it: a rule that
 * would send a fenced country outside its fence (naming the rule's key, the country, the pool and
 * the fence), fences that overlap, and floors outside their fence. `validate`, `plan`, `apply`,
 * `move`, `boost` and `rollback` refuse intent that adds one.
 */
export function fenceViolations(snapshot: Snapshot, opts: CompileOptions): Problem[] {
  return compile(snapshot, opts).problems.filter(isFenceProblem);
}
