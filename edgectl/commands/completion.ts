import { Argument, Command } from "commander";
import { type CommandContext, withCommonOptions } from "../cli/command-context.js";
import { ExitCode } from "../cli/exit-codes.js";

const SHELLS = ["bash", "zsh", "fish"] as const;

/** `edgectl completion bash|zsh|fish`: a completion script generated from the command tree. */
export function completionCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("completion"))
    .description("print a shell completion script (bash, zsh or fish)")
    .addArgument(new Argument("<shell>", "the shell").choices(SHELLS))
    .action(async (shell: (typeof SHELLS)[number], _opts: unknown, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { completionTree } = await import("../completion/completion-tree.js");
      const { bashCompletion } = await import("../completion/bash-completion.js");
      const { zshCompletion } = await import("../completion/zsh-completion.js");
      const { fishCompletion } = await import("../completion/fish-completion.js");
      const { CompletionShape } = await import("../output/shapes/completion-shape.js");
      const tree = completionTree(cmd.parent ?? cmd);
      const render = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion }[shell];
      const script = render(tree);
      ctx.emit(
        { shell, script },
        { schema: CompletionShape, text: (r) => [r.script.replace(/\n$/, "")] },
      );
      ctx.exit(ExitCode.ok);
    });
}
