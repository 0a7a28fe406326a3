import type { ProblemCode } from "./problem.js";

/** The codes a schema's issue may carry in `params.problemCode` instead of `invalid-value`. */
const ISSUE_CODES: ReadonlySet<ProblemCode> = new Set<ProblemCode>(["ip-literal-origin"]);

/**
 * The problem code for one zod issue: the one a schema set in `params.problemCode` (such as
 * `OriginSchema`'s `ip-literal-origin`), otherwise `invalid-value`.
 */
export function issueProblemCode(issue: object): ProblemCode {
  const params = "params" in issue ? issue.params : undefined;
  if (typeof params === "object" && params !== null && "problemCode" in params) {
    const code = (params as { problemCode: unknown }).problemCode;
    if (ISSUE_CODES.has(code as ProblemCode)) return code as ProblemCode;
  }
  return "invalid-value";
}
