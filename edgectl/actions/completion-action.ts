import type { Command } from "commander";
import { ExitCode } from "../cli/exit-codes.js";
import { bashCompletion } from "../completion/bash-completion.js";
import { type COMPLETION_SHELLS, completionTree } from "../completion/completion-tree.js";
import { fishCompletion } from "../completion/fish-completion.js";
import { zshCompletion } from "../completion/zsh-completion.js";
import type { CommandContext } from "../output/command-context.js";
import { CompletionShape } from "../output/shapes/completion-shape.js";

/** `edgectl completion`'s action (`edgectl/commands/completion.ts` defines its arguments and options). */
export async function completionAction(
  ctx: CommandContext,
  shell: (typeof COMPLETION_SHELLS)[number],
  _opts: unknown,
  cmd: Command,
): Promise<void> {
  const tree = completionTree(cmd.parent ?? cmd);
  const render = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion }[shell];
  const script = render(tree);
  ctx.emit(
    { shell, script },
    { schema: CompletionShape, text: (r) => [r.script.replace(/\n$/, "")] },
  );
  ctx.exit(ExitCode.ok);
}
