import type { Command } from "commander";
import { withEtcdMembers } from "../../adapters/etcd-members.js";
import { ApplyShape, applyDocument, applyText } from "../apply/apply-document.js";
import { type CanaryFlags, canaryRequestOf } from "../apply/canary-flags.js";
import type { CommitRules } from "../apply/commit.js";
import { commitPlan } from "../apply/commit-plan.js";
import { planIntent } from "../apply/intent-plan.js";
import { loadDesiredState } from "../apply/load-desired-state.js";
import { originWarnings } from "../apply/origin-warnings.js";
import { ExitCode } from "../cli/exit-codes.js";
import type { CommandContext } from "../output/command-context.js";

/** `apply`'s options as commander parses them. */
export interface ApplyOptions extends CanaryFlags {
  readonly yes?: boolean;
  readonly reason?: string;
}

/** `edgectl apply`'s action (`edgectl/commands/apply.ts` defines its arguments and options). */
export async function applyAction(
  ctx: CommandContext,
  file: string,
  opts: ApplyOptions,
  cmd: Command,
  commitRules?: CommitRules,
): Promise<void> {
  const settings = ctx.settings(cmd);
  const canary = canaryRequestOf(opts);
  const desired = await loadDesiredState(file);
  ctx.warn(...originWarnings(desired));
  await withEtcdMembers(settings, async (client) => {
    const plan = await planIntent(client, settings, desired);
    const commit = await commitPlan(
      ctx,
      client,
      settings,
      plan,
      {
        command: "apply",
        reason: opts.reason,
        yes: opts.yes === true,
        canary,
      },
      commitRules,
    );
    ctx.emit(applyDocument(file, settings, plan, commit), {
      schema: ApplyShape,
      text: applyText,
    });
    ctx.exit(ExitCode.ok);
  });
}
