import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../command-context.js";
import { ExitCode } from "../exit-codes.js";

/** `edgectl plan FILE`: the diff against etcd and its edge effect under current health. */
export function planCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("plan"))
    .description("validate a file and show what apply would change, and where traffic would move")
    .argument("<file>", "desired-state file")
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { compileOptions } = await import("../compile-options.js");
      const { edgeEffect, formatEdgeEffect } = await import("../edge-effect.js");
      const { readPrefixFromAny, toSnapshot } = await import("../etcd-client.js");
      const { withEtcdMembers } = await import("../etcd-members.js");
      const { loadDesiredState } = await import("../load-desired-state.js");
      const { diffIntent, formatDiff } = await import("../plan-diff.js");
      const { assertNoNewProblems } = await import("../proposed-problems.js");
      const settings = ctx.settings(cmd);
      const desired = await loadDesiredState(file);
      await withEtcdMembers(settings, async (members) => {
        const read = await readPrefixFromAny(members, settings.prefix);
        const changes = diffIntent(read, desired, settings.prefix);
        ctx.print(
          `Plan for ${settings.prefix} at revision ${read.revision}:`,
          ...formatDiff(changes),
        );
        if (changes.length > 0) {
          const shifts = edgeEffect(toSnapshot(read), changes, compileOptions(settings));
          ctx.print(...formatEdgeEffect(shifts));
          assertNoNewProblems(toSnapshot(read), changes, compileOptions(settings));
        }
      });
      ctx.exit(ExitCode.ok);
    });
}
