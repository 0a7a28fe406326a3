import { Command } from "commander";
import type { CliIo } from "./cli-io.js";
import { createCommandContext, withCommonOptions } from "./command-context.js";
import { applyCommand } from "./commands/apply.js";
import { boostCommand } from "./commands/boost.js";
import { explainCommand } from "./commands/explain.js";
import { exportCommand } from "./commands/export.js";
import { heartbeatCommand } from "./commands/heartbeat.js";
import { planCommand } from "./commands/plan.js";
import { statusCommand } from "./commands/status.js";
import { unboostCommand } from "./commands/unboost.js";
import { validateCommand } from "./commands/validate.js";

/** Builds a fresh `edgectl` program; `exit` receives the exit code of the command that ran. */
export function buildProgram(io: CliIo, exit: (code: number) => void): Command {
  const ctx = createCommandContext(io, exit);
  const program = withCommonOptions(new Command("edgectl"))
    .description(
      "Operator CLI for edge-router: routing intent, boosts, heartbeats and status in etcd",
    )
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    })
    .showHelpAfterError("(run with --help for usage)")
    .allowExcessArguments(false);
  for (const make of [
    validateCommand,
    planCommand,
    applyCommand,
    exportCommand,
    explainCommand,
    boostCommand,
    unboostCommand,
    heartbeatCommand,
    statusCommand,
  ]) {
    const cmd = make(ctx)
      .exitOverride()
      .configureOutput({
        writeOut: (s) => io.stdout.write(s),
        writeErr: (s) => io.stderr.write(s),
      })
      .allowExcessArguments(false);
    cmd.showHelpAfterError(`(run "edgectl ${cmd.name()} --help" for usage)`);
    program.addCommand(cmd);
  }
  return program;
}
