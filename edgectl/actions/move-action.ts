import type { Command } from "commander";
import { withEtcdMembers } from "../../adapters/etcd-members.js";
import { commitFields } from "../apply/apply-document.js";
import { type CanaryFlags, canaryRequestOf } from "../apply/canary-flags.js";
import type { CommitRules } from "../apply/commit.js";
import { commitPlan } from "../apply/commit-plan.js";
import { planOfChanges } from "../apply/intent-plan.js";
import { CliError } from "../cli/cli-error.js";
import { ExitCode } from "../cli/exit-codes.js";
import { parseTargetArgument } from "../cli/target-argument.js";
import { readPrefixFromAny } from "../etcd/read-prefix.js";
import type { CommandContext } from "../output/command-context.js";
import { MoveShape } from "../output/shapes/move-shape.js";
import { moveChanges, ruleKey } from "../rules/move-rules.js";

/** `move`'s options as commander parses them. */
export interface MoveOptions extends CanaryFlags {
  readonly to: string;
  readonly fallbacks?: string;
  readonly reason?: string;
  readonly yes?: boolean;
}

const list = (raw: string) =>
  raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/** `edgectl move`'s action (`edgectl/commands/move.ts` defines its arguments and options). */
export async function moveAction(
  ctx: CommandContext,
  raw: string,
  opts: MoveOptions,
  cmd: Command,
  commitRules?: CommitRules,
): Promise<void> {
  const targets = list(raw).map((t) => parseTargetArgument(t).target);
  if (targets.length === 0)
    throw new CliError("invalid-input", "move: name at least one country or continent");
  const canary = canaryRequestOf(opts);
  const fallbacks = opts.fallbacks === undefined ? undefined : list(opts.fallbacks);
  const settings = ctx.settings(cmd);
  await withEtcdMembers(settings, async (client) => {
    const read = await readPrefixFromAny(client, settings.prefix);
    const { changes, notes } = moveChanges(read, settings.prefix, targets, opts.to, fallbacks);
    const plan = planOfChanges(read, changes, settings);
    const commit = await commitPlan(
      ctx,
      client,
      settings,
      plan,
      {
        command: "move",
        reason: opts.reason,
        yes: opts.yes === true,
        notes,
        canary,
      },
      commitRules,
    );
    const keys = [...new Set(targets.map(ruleKey))];
    ctx.emit(
      { ...commitFields(settings, plan, commit), targets: keys, to: opts.to, notes },
      {
        schema: MoveShape,
        text: (r, paint) =>
          r.applied
            ? [
                `${paint("green", "Applied")} ${r.changes.length} changes: epoch ${r.epoch} at revision ${r.commit_revision}.`,
              ]
            : [
                `No changes: ${r.targets.join(", ")} already ${r.targets.length === 1 ? "has" : "have"} primary ${r.to} with that chain. Nothing written.`,
              ],
      },
    );
    ctx.exit(ExitCode.ok);
  });
}
