import { CommanderError } from "commander";
import { ConfigError } from "../adapters/errors.js";
import { CliError } from "./cli-error.js";
import type { CliIo } from "./cli-io.js";
import { EtcdUnavailableError } from "./etcd-unavailable-error.js";
import { ExitCode } from "./exit-codes.js";
import { buildProgram } from "./program.js";

/**
 * Runs `edgectl` with the given arguments (without `node` and the script) and returns the exit
 * code. User errors print one line (plus details), never a stack; unexpected errors print a stack
 * only with `--debug`.
 */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  let code: number = ExitCode.ok;
  const program = buildProgram(io, (c) => {
    code = c;
  });
  const err = (line: string) => io.stderr.write(`${line}\n`);
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code;
  } catch (e) {
    if (e instanceof CommanderError) {
      // help and version are "errors" to commander; they exit 0
      return e.exitCode === 0 ? ExitCode.ok : ExitCode.failure;
    }
    if (e instanceof CliError) {
      err(`edgectl: ${e.message}`);
      for (const d of e.details) err(`  ${d}`);
      return e.exitCode;
    }
    if (e instanceof EtcdUnavailableError) {
      err(`edgectl: etcd unavailable, nothing written: ${e.message}`);
      return ExitCode.unavailable;
    }
    if (e instanceof ConfigError) {
      err(`edgectl: configuration: ${e.message}`);
      return ExitCode.failure;
    }
    // Loaded only on this path: etcd3 is heavy, and an etcd3 error means it is loaded already.
    const { isEtcdFailure } = await import("./etcd-failure.js");
    if (isEtcdFailure(e)) {
      err(`edgectl: etcd: ${e.message.split("\n")[0]} (${e.name})`);
      if (argv.includes("--debug") && e.stack) err(e.stack);
      return ExitCode.failure;
    }
    const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    err(`edgectl: unexpected error: ${text}`);
    if (argv.includes("--debug") && e instanceof Error && e.stack) err(e.stack);
    else err("(run again with --debug for a stack trace)");
    return ExitCode.failure;
  }
}
