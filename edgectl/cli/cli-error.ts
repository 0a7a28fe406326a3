import { ExitCode } from "./exit-codes.js";

/** Codes of the user-facing errors `edgectl` reports as one line, without a stack trace. */
export type CliErrorCode =
  | "usage"
  | "unreadable-file"
  | "syntax-error"
  | "invalid-input"
  | "not-confirmed"
  | "too-many-ops"
  | "unknown-pool"
  | "conflict"
  | "locked"
  | "unreachable"
  | "etcd-unavailable"
  | "outcome-unknown"
  /** `top`: the edge refused the observations token (401 or 403). */
  | "unauthorized"
  /** `top`: the edge answered another status than 200 (404: it has no `OBSERVE_TOKEN`). */
  | "edge-status"
  /** `top`: the edge's answer is not an observations document. */
  | "junk-response"
  /** `rollback`: a record it needs is pruned or missing. */
  | "audit-missing"
  /** `rollback`: the records do not match the intent (or one is invalid). */
  | "audit-mismatch";

const EXIT: Record<CliErrorCode, ExitCode> = {
  usage: ExitCode.failure,
  "unreadable-file": ExitCode.failure,
  "syntax-error": ExitCode.failure,
  "invalid-input": ExitCode.failure,
  "not-confirmed": ExitCode.failure,
  "too-many-ops": ExitCode.failure,
  "unknown-pool": ExitCode.failure,
  conflict: ExitCode.conflict,
  locked: ExitCode.locked,
  unreachable: ExitCode.failure,
  "etcd-unavailable": ExitCode.unavailable,
  "outcome-unknown": ExitCode.unknown,
  unauthorized: ExitCode.failure,
  "edge-status": ExitCode.failure,
  "junk-response": ExitCode.failure,
  "audit-missing": ExitCode.failure,
  "audit-mismatch": ExitCode.failure,
};

/** Every {@link CliErrorCode}, for the JSON error shape's enum (add a code to the union and `EXIT`). */
export const CLI_ERROR_CODES = Object.keys(EXIT) as [CliErrorCode, ...CliErrorCode[]];

/** An expected failure (bad input, refused, conflict): printed as its message, never a stack. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    readonly code: CliErrorCode,
    message: string,
    /** Extra lines printed after the message (e.g. one per validation problem). */
    readonly details: readonly string[] = [],
  ) {
    super(message);
  }

  /** The process exit code for this error. */
  get exitCode(): ExitCode {
    return EXIT[this.code];
  }
}
