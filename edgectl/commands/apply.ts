import { Command } from "commander";
import { acquireApplyLock } from "../apply-lock.js";
import { epochAtRead } from "../apply-transaction.js";
import { CliError } from "../cli-error.js";
import { type CommandContext, withCommonOptions } from "../command-context.js";
import { commitFailure } from "../commit-failure.js";
import { commitUnderLock } from "../commit-under-lock.js";
import { compileOptions } from "../compile-options.js";
import { confirm } from "../confirm.js";
import { edgeEffect, formatEdgeEffect } from "../edge-effect.js";
import { readPrefixFromAny, toSnapshot } from "../etcd-client.js";
import { withEtcdMembers } from "../etcd-members.js";
import { ExitCode } from "../exit-codes.js";
import { loadDesiredState } from "../load-desired-state.js";
import { diffIntent, formatDiff } from "../plan-diff.js";
import { assertNoNewProblems } from "../proposed-problems.js";

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
      const settings = ctx.settings(cmd);
      const desired = await loadDesiredState(file);
      // `client` is edgectl's etcd client over every member (the fault suite's CAS mutant patches
      // the lock line below by its text)
      await withEtcdMembers(settings, async (client) => {
        const read = await readPrefixFromAny(client, settings.prefix);
        const changes = diffIntent(read, desired, settings.prefix);
        if (changes.length === 0) {
          ctx.print(`No changes: ${settings.prefix} already holds ${file}. Nothing written.`);
          ctx.exit(ExitCode.ok);
          return;
        }
        if (changes.length + 1 > settings.maxTxnOps) {
          throw new CliError(
            "too-many-ops",
            `${changes.length} changes exceed etcd's ${settings.maxTxnOps} operations per transaction; raise etcd --max-txn-ops (and EDGECTL_MAX_TXN_OPS) or apply in smaller steps`,
          );
        }
        assertNoNewProblems(toSnapshot(read), changes, compileOptions(settings));
        const epoch = epochAtRead(read);
        ctx.print(
          `Plan for ${settings.prefix} at revision ${read.revision} (epoch ${epoch.value}):`,
          ...formatDiff(changes),
          ...formatEdgeEffect(edgeEffect(toSnapshot(read), changes, compileOptions(settings))),
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
        ctx.print(
          `Applied ${changes.length} changes: epoch ${result.epoch} at revision ${result.revision}.`,
        );
        ctx.exit(ExitCode.ok);
      });
    });
}
