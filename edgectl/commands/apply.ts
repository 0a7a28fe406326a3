import { Command } from "commander";
import { CliError } from "../cli-error.js";
import { type CommandContext, withCommonOptions } from "../command-context.js";
import { ExitCode } from "../exit-codes.js";

/**
 * `edgectl apply FILE [--yes]`: validate, read at one revision, diff, confirm, take `lock/apply`,
 * then one CAS transaction on `epoch` and the lock. 0 applied, 1 invalid, 2 conflict, 3 locked,
 * 4 etcd unavailable (nothing written), 5 outcome unknown.
 */
export function applyCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("apply"))
    .description("make etcd's intent (pools and country rules) exactly the file, atomically")
    .argument("<file>", "desired-state file")
    .option("-y, --yes", "apply without asking for confirmation")
    .action(async (file: string, opts: { yes?: boolean }, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { acquireApplyLock } = await import("../apply-lock.js");
      const { epochAtRead } = await import("../apply-transaction.js");
      const { commitFailure } = await import("../commit-failure.js");
      const { commitUnderLock } = await import("../commit-under-lock.js");
      const { confirm } = await import("../confirm.js");
      const { withEtcdMembers } = await import("../etcd-members.js");
      const { planIntent } = await import("../intent-plan.js");
      const { loadDesiredState } = await import("../load-desired-state.js");
      const { formatDiff } = await import("../plan-diff.js");
      const { ApplyShape, applyDocument, applyText } = await import("../output/apply-document.js");
      const settings = ctx.settings(cmd);
      const desired = await loadDesiredState(file);
      // `client` is edgectl's etcd client over every member (the fault suite's CAS mutant patches
      // the lock line below by its text)
      await withEtcdMembers(settings, async (client) => {
        const plan = await planIntent(client, settings, desired);
        const { read, changes } = plan;
        if (changes.length === 0) {
          ctx.emit(applyDocument(file, settings, plan, null), {
            schema: ApplyShape,
            text: applyText,
          });
          ctx.exit(ExitCode.ok);
          return;
        }
        if (changes.length + 1 > settings.maxTxnOps) {
          throw new CliError(
            "too-many-ops",
            `${changes.length} changes exceed etcd's ${settings.maxTxnOps} operations per transaction; raise etcd --max-txn-ops (and EDGECTL_MAX_TXN_OPS) or apply in smaller steps`,
          );
        }
        plan.assertNoNewProblems();
        const epoch = epochAtRead(read);
        ctx.print(
          `Plan for ${settings.prefix} at revision ${read.revision} (epoch ${epoch.value}):`,
          ...formatDiff(changes),
          ...plan.effectLines(),
        );
        if (!opts.yes) {
          if (!ctx.io.isTTY) {
            throw new CliError(
              "not-confirmed",
              "refusing to apply without confirmation: stdin is not a terminal (pass --yes)",
            );
          }
          if (!(await confirm(ctx.io, `Apply ${changes.length} changes?`))) {
            throw new CliError("not-confirmed", "not applied: not confirmed");
          }
        }
        const attempt = await acquireApplyLock(client, settings.prefix, settings.lockTtlSeconds);
        const result = await commitUnderLock(client, settings, attempt, epoch, changes, (l) =>
          ctx.warn(l),
        );
        if (!result.ok) throw commitFailure(result, epoch.value);
        ctx.emit(applyDocument(file, settings, plan, result), {
          schema: ApplyShape,
          text: applyText,
        });
        ctx.exit(ExitCode.ok);
      });
    });
}
