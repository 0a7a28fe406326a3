/** Every kind of problem that validation or compilation can report. */
export type ProblemCode =
  | "unknown-key"
  | "invalid-key"
  | "too-large"
  | "not-utf8"
  | "invalid-json"
  | "invalid-value"
  | "dangling-reference"
  | "missing-default"
  | "invalid-epoch";

/** One problem, always naming the key (relative to the prefix, or a file path like `countries.DE`). */
export interface Problem {
  readonly key: string;
  readonly code: ProblemCode;
  readonly message: string;
}

/** Renders a problem the way the map's `problems`, logs and the CLI show it: `key: message`. */
export function formatProblem(p: Problem): string {
  return `${p.key}: ${p.message}`;
}
