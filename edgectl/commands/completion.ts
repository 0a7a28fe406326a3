import { Argument, Command } from "commander";
import { COMPLETION_SHELLS } from "../completion/completion-tree.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/** `edgectl completion bash|zsh|fish`: a completion script generated from the command tree. */
export function completionCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("completion"))
    .description("print a shell completion script (bash, zsh or fish)")
    .addArgument(new Argument("<shell>", "the shell").choices(COMPLETION_SHELLS))
    .action(async (shell: (typeof COMPLETION_SHELLS)[number], _opts: unknown, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { completionAction } = await import("../actions/completion-action.js");
      await completionAction(ctx, shell, _opts, cmd);
    });
}
