import { MAX_PROBLEM_CHARS, safeText } from "../contract/safe-text.js";

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
  | "invalid-epoch"
  | "fence-crossing"
  | "fence-overlap"
  | "fence-floor"
  | "ip-literal-origin";

/** One problem, always naming the key (relative to the prefix, or a file path like `countries.DE`). */
export interface Problem {
  readonly key: string;
  readonly code: ProblemCode;
  readonly message: string;
}

/** Most characters of a problem's key as shown: junk key names can be megabytes long. */
export const MAX_PROBLEM_KEY_CHARS = 96;

/**
 * A problem whose key and message are safe to show: control characters escaped, the key cut to
 * `MAX_PROBLEM_KEY_CHARS` and the message to `MAX_PROBLEM_CHARS`. Messages are written never to
 * quote a value (see `valueFreeIssue`); this bounds them whatever they say.
 */
export function problem(key: string, code: ProblemCode, message: string): Problem {
  return {
    key: safeText(key, MAX_PROBLEM_KEY_CHARS),
    code,
    message: safeText(message, MAX_PROBLEM_CHARS),
  };
}

/**
 * Renders a problem the way the map's `problems`, logs and the CLI show it: `key: message`, at
 * most `MAX_PROBLEM_CHARS` characters with control characters escaped, whatever the key holds.
 */
export function formatProblem(p: Problem): string {
  return safeText(
    `${safeText(p.key, MAX_PROBLEM_KEY_CHARS)}: ${safeText(p.message)}`,
    MAX_PROBLEM_CHARS,
  );
}
