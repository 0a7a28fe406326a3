import { CommanderError } from "commander";
import type { CommitRules } from "./apply/commit.js";
import type { CliIo } from "./cli/cli-io.js";
import { ExitCode } from "./cli/exit-codes.js";
import { failureOf } from "./cli/failure.js";
import { createCliOutput, lacksJsonResult } from "./output/cli-output.js";
import { outputModeFromArgv } from "./output/output-mode.js";
import { buildProgram } from "./program.js";

/**
 * Runs `edgectl` with the given arguments (without `node` and the script) and returns the exit
 * code. A failure is reported once, in the output mode asked for (see `CliOutput`): in text mode
 * one line (plus details) on stderr, never a stack unless `--debug`; in JSON mode the error
 * document on stdout. The exit code is the same in both modes. `apply`, `move` and `rollback`
 * commit under `commitRules` (default `CAS_RULES`; only the fault suite's CAS mutant passes others).
 */
export async function run(
  argv: readonly string[],
  io: CliIo,
  commitRules?: CommitRules,
): Promise<number> {
  let code: number = ExitCode.ok;
  // the pre-scan only matters for usage errors: an action runs with the parsed `-o`
  const output = createCliOutput(io, outputModeFromArgv(argv));
  const program = buildProgram(
    io,
    output,
    (c) => {
      code = c;
    },
    commitRules,
  );
  try {
    await program.parseAsync([...argv], { from: "user" });
    // the JSON contract is one document: an action that finished without one is a bug
    if (lacksJsonResult(output))
      throw new Error("internal: the command finished without a JSON result");
    return code;
  } catch (e) {
    // help and version are "errors" to commander; they exit 0
    if (e instanceof CommanderError && e.exitCode === 0) return ExitCode.ok;
    const failure = await failureOf(e);
    // commander has written its own usage error in text mode (JSON mode silences it)
    if (e instanceof CommanderError && output.mode === "text") return failure.exitCode;
    output.fail(failure, argv.includes("--debug"));
    return failure.exitCode;
  }
}
