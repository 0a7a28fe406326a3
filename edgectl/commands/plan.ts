import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../command-context.js";
import { compileOptions } from "../compile-options.js";
import { edgeEffect, formatEdgeEffect } from "../edge-effect.js";
import { readPrefixFromAny, toSnapshot } from "../etcd-client.js";
import { withEtcdMembers } from "../etcd-members.js";
import { ExitCode } from "../exit-codes.js";
import { loadDesiredState } from "../load-desired-state.js";
import { diffIntent, formatDiff } from "../plan-diff.js";
import { assertNoNewProblems } from "../proposed-problems.js";

/** `edgectl plan FILE`: the diff against etcd and its edge effect under current health. */
export function planCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("plan"))
    .description("validate a file and show what apply would change, and where traffic would move")
    .argument("<file>", "desired-state file")
    .action(async (file: string, _opts: unknown, cmd: Command) => {
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
