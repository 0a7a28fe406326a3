import { CommanderError } from "commander";
import { ConfigError } from "../../adapters/errors.js";
import { EtcdUnavailableError } from "../../adapters/etcd-unavailable-error.js";
import { CLI_ERROR_CODES, CliError } from "./cli-error.js";
import { ExitCode } from "./exit-codes.js";

/**
 * Every `error.code` edgectl reports: the {@link CliError} codes plus the failures that are not
 * CliErrors. Scripts switch on these, never on the message.
 */
export const FAILURE_CODES = [...CLI_ERROR_CODES, "config", "etcd-error", "unexpected"] as const;

/** One of {@link FAILURE_CODES}. */
export type FailureCode = (typeof FAILURE_CODES)[number];

/** A failure as edgectl reports it, in either output mode, with its exit code. */
export interface Failure {
  readonly code: FailureCode;
  /** One line, the same in text and JSON mode (text mode prints it after `edgectl: `). */
  readonly message: string;
  /** Further lines, e.g. one per validation problem, each naming its key. */
  readonly details: readonly string[];
  readonly exitCode: ExitCode;
  /** The stack trace, printed (to stderr) only with `--debug`. */
  readonly stack?: string;
  /** Text mode's hint after an unexpected error. */
  readonly hint?: string;
}

const stackOf = (e: unknown) => (e instanceof Error && e.stack ? { stack: e.stack } : {});

/** Classifies whatever a command threw; never throws itself. */
export async function failureOf(e: unknown): Promise<Failure> {
  if (e instanceof CommanderError) {
    const message =
      e.code === "commander.help" || e.message === "(outputHelp)"
        ? "no command given (run edgectl --help)"
        : e.message.replace(/^error: /, "");
    return { code: "usage", message, details: [], exitCode: ExitCode.failure };
  }
  if (e instanceof CliError)
    return { code: e.code, message: e.message, details: e.details, exitCode: e.exitCode };
  if (e instanceof EtcdUnavailableError)
    return {
      code: e.code,
      message: `etcd unavailable, nothing written: ${e.message}`,
      details: [],
      exitCode: ExitCode.unavailable,
    };
  if (e instanceof ConfigError)
    return {
      code: "config",
      message: `configuration: ${e.message}`,
      details: [],
      exitCode: ExitCode.failure,
    };
  // Lazy: etcd3 static here made `edgectl --help` 133 ms, not 51 (min of 10; node -e 0: 24).
  const { isEtcdFailure } = await import("../etcd/etcd-failure.js");
  if (isEtcdFailure(e))
    return {
      code: "etcd-error",
      message: `etcd: ${e.message.split("\n")[0]} (${e.name})`,
      details: [],
      exitCode: ExitCode.failure,
      ...stackOf(e),
    };
  const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return {
    code: "unexpected",
    message: `unexpected error: ${text}`,
    details: [],
    exitCode: ExitCode.failure,
    hint: "(run again with --debug for a stack trace)",
    ...stackOf(e),
  };
}
