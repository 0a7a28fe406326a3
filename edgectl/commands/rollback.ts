import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../command-context.js";
import { ExitCode } from "../exit-codes.js";

/**
 * `edgectl rollback EPOCH [--yes] [--reason TEXT]`: restores the intent as it was right after
 * EPOCH, rebuilt from the audit records (so etcd's compaction does not matter), as a new apply
 * with its own plan, lock, CAS and record (command `rollback`). The current epoch: exit 0.
 */
export function rollbackCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("rollback"))
    .description("restore the intent as it was right after an epoch (from the audit records)")
    .argument("<epoch>", "the epoch to go back to (see edgectl history)")
    .option("-y, --yes", "apply without asking for confirmation")
    .option("--reason <text>", "why (kept in the audit record after 'rollback to epoch N: ')")
    .action(async (raw: string, opts: { yes?: boolean; reason?: string }, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { epochAtRead } = await import("../apply-transaction.js");
      const { oldestAuditEpoch, readAuditRecordsAfter } = await import("../audit-read.js");
      const { desiredDocOf, intentAfterEpoch } = await import("../audit-rollback.js");
      const { CliError } = await import("../cli-error.js");
      const { commitPlan } = await import("../commit-plan.js");
      const { readPrefixFromAny } = await import("../etcd-client.js");
      const { withEtcdMembers } = await import("../etcd-members.js");
      const { planOfChanges } = await import("../intent-plan.js");
      const { validateDesiredDoc } = await import("../load-desired-state.js");
      const { commitFields } = await import("../output/apply-document.js");
      const { RollbackShape } = await import("../output/shapes/rollback-shape.js");
      const { diffIntent } = await import("../plan-diff.js");
      if (!/^[0-9]{1,12}$/.test(raw.trim()))
        throw new CliError("invalid-input", `rollback: "${raw}" is not an epoch (0 or more)`);
      const target = Number(raw.trim());
      const settings = ctx.settings(cmd);
      await withEtcdMembers(settings, async (client) => {
        const read = await readPrefixFromAny(client, settings.prefix);
        const current = epochAtRead(read).value;
        if (target > current)
          throw new CliError(
            "invalid-input",
            `cannot roll back to epoch ${target}: the current epoch is ${current}`,
          );
        const reason = `rollback to epoch ${target}${opts.reason ? `: ${opts.reason}` : ""}`;
        const noChanges =
          target === current
            ? `Epoch ${target} is the current epoch: nothing to roll back. Nothing written.`
            : `No changes: the intent already equals the intent after epoch ${target}. Nothing written.`;
        let changes: ReturnType<typeof diffIntent> = [];
        if (target < current) {
          const [records, oldest] = await Promise.all([
            readAuditRecordsAfter(client, settings.auditPrefix, target, read.revision),
            oldestAuditEpoch(client, settings.auditPrefix, read.revision),
          ]);
          const intent = intentAfterEpoch({ read, currentEpoch: current, target, records, oldest });
          const desired = validateDesiredDoc(
            desiredDocOf(intent),
            `the intent after epoch ${target}`,
          );
          changes = diffIntent(read, desired, settings.prefix);
        }
        const plan = planOfChanges(read, changes, settings);
        const commit = await commitPlan(ctx, client, settings, plan, {
          command: "rollback",
          reason,
          yes: opts.yes === true,
        });
        ctx.emit(
          { ...commitFields(settings, plan, commit), to_epoch: target },
          {
            schema: RollbackShape,
            text: (r, paint) => [
              r.applied
                ? `${paint("green", "Applied")} ${r.changes.length} changes: epoch ${r.epoch} at revision ${r.commit_revision} (the intent after epoch ${r.to_epoch}).`
                : noChanges,
            ],
          },
        );
        ctx.exit(ExitCode.ok);
      });
    });
}
