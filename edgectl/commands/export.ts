import { Command } from "commander";
import { stringify } from "yaml";
import { desiredStateFromRouting, readSnapshot } from "../../core/index.js";
import { type CommandContext, withCommonOptions } from "../command-context.js";
import { readPrefixFromAny, toSnapshot } from "../etcd-client.js";
import { withEtcdMembers } from "../etcd-members.js";
import { ExitCode } from "../exit-codes.js";

/** `edgectl export`: the current intent as a desired-state file (apply of it is a no-op). */
export function exportCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("export"))
    .description("print the current intent as a desired-state YAML file")
    .action(async (_opts: unknown, cmd: Command) => {
      const settings = ctx.settings(cmd);
      await withEtcdMembers(settings, async (members) => {
        const read = await readPrefixFromAny(members, settings.prefix);
        const state = readSnapshot(toSnapshot(read), settings.prefix);
        const desired = desiredStateFromRouting(state);
        ctx.io.stdout.write(
          `# edgectl export of ${settings.prefix} at revision ${read.revision}, epoch ${state.epoch}\n`,
        );
        ctx.io.stdout.write(stringify(desired, { lineWidth: 0 }));
        const skipped = state.problems.filter(
          (p) => p.key.startsWith("pool/") || p.key.startsWith("country/"),
        );
        for (const p of skipped) ctx.warn(`warning: not exported: ${p.key}: ${p.message}`);
      });
      ctx.exit(ExitCode.ok);
    });
}
