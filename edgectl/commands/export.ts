import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../cli/command-context.js";
import { ExitCode } from "../cli/exit-codes.js";

/** `edgectl export`: the current intent as a desired-state file (apply of it is a no-op). */
export function exportCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("export"))
    .description("print the current intent as a desired-state YAML file")
    .action(async (_opts: unknown, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { terminalYaml } = await import("../output/terminal-yaml.js");
      const { desiredStateFromRouting, escapeUnsafe, formatProblem, readSnapshot } = await import(
        "../../core/index.js"
      );
      const { readPrefixFromAny, toSnapshot } = await import("../etcd/read-prefix.js");
      const { withEtcdMembers } = await import("../etcd/etcd-members.js");
      const { ExportShape } = await import("../output/shapes/export-shape.js");
      const settings = ctx.settings(cmd);
      await withEtcdMembers(settings, async (members) => {
        const read = await readPrefixFromAny(members, settings.prefix);
        const state = readSnapshot(toSnapshot(read), settings.prefix);
        const desired = desiredStateFromRouting(state);
        const skipped = state.problems
          .filter(
            (p) =>
              p.key.startsWith("pool/") ||
              p.key.startsWith("country/") ||
              p.key.startsWith("fence/"),
          )
          .map(formatProblem);
        ctx.emit(
          {
            prefix: settings.prefix,
            revision: read.revision,
            epoch: state.epoch,
            state: desired,
            not_exported: skipped,
          },
          {
            schema: ExportShape,
            text: (r) => [
              `# edgectl export of ${escapeUnsafe(r.prefix)} at revision ${r.revision}, epoch ${r.epoch}`,
              // the document ends in a newline, which the line join adds back
              terminalYaml(desired).replace(/\n$/, ""),
            ],
          },
        );
        if (ctx.mode === "text") for (const p of skipped) ctx.warn(`warning: not exported: ${p}`);
      });
      ctx.exit(ExitCode.ok);
    });
}
