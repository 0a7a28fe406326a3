import type { Command } from "commander";
import { withEtcdMembers } from "../../adapters/etcd-members.js";
import {
  decodeSnapshot,
  desiredStateFromRouting,
  escapeUnsafe,
  formatProblem,
} from "../../core/index.js";
import { ExitCode } from "../cli/exit-codes.js";
import { readPrefixFromAny, toSnapshot } from "../etcd/read-prefix.js";
import type { CommandContext } from "../output/command-context.js";
import { ExportShape } from "../output/shapes/export-shape.js";
import { terminalYaml } from "../output/terminal-yaml.js";

/** `edgectl export`'s action (`edgectl/commands/export.ts` defines its arguments and options). */
export async function exportAction(
  ctx: CommandContext,
  _opts: unknown,
  cmd: Command,
): Promise<void> {
  const settings = ctx.settings(cmd);
  await withEtcdMembers(settings, async (members) => {
    const read = await readPrefixFromAny(members, settings.prefix);
    const state = decodeSnapshot(toSnapshot(read), settings.prefix);
    const desired = desiredStateFromRouting(state);
    const skipped = state.problems
      .filter(
        (p) =>
          p.key.startsWith("pool/") || p.key.startsWith("country/") || p.key.startsWith("fence/"),
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
}
