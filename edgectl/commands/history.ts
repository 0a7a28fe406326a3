import { Command } from "commander";
import { safeText } from "../../core/contract/safe-text.js";
import { type CommandContext, withCommonOptions } from "../cli/command-context.js";
import { ExitCode } from "../cli/exit-codes.js";
import type { HistoryResult } from "../output/shapes/history-shape.js";

/** `history`'s default `--limit`. */
export const DEFAULT_HISTORY_LIMIT = 20;

const sign = (c: HistoryResult["records"][number]["changes"][number]) =>
  c.before === null ? "+" : c.after === null ? "-" : "~";

/** The text lines of `history`: one line per record, then its changed keys. */
export function historyText(r: HistoryResult): string[] {
  const lines: string[] = [];
  if (r.records.length === 0 && r.invalid.length === 0)
    return [`No audit records under ${r.audit_prefix}.`];
  for (const rec of r.records) {
    // records are anyone's text with write access to AUDIT_PREFIX: never raw on a terminal
    const why = rec.reason === null ? "" : `  reason: ${safeText(JSON.stringify(rec.reason), 500)}`;
    lines.push(`epoch ${rec.epoch}  ${rec.at}  ${safeText(rec.by)}  ${rec.command}${why}`);
    const keys = rec.changes.map((c) => `${sign(c)}${safeText(c.key)}`);
    lines.push(`    ${keys.length ? keys.join("  ") : "(no changes)"}`);
  }
  for (const bad of r.invalid) lines.push(`invalid record ${safeText(bad.key)}: ${bad.problem}`);
  return lines;
}

/**
 * `edgectl history [--limit N]`: the audit records, newest first: epoch, time, who, command,
 * reason and changed keys (`+` added, `~` changed, `-` removed). Exit 0.
 */
export function historyCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("history"))
    .description("list the audit records of intent changes, newest first")
    .option("--limit <n>", `how many records (default ${DEFAULT_HISTORY_LIMIT})`)
    .action(async (opts: { limit?: string }, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { readNewestAuditRecords } = await import("../audit/audit-read.js");
      const { CliError } = await import("../cli/cli-error.js");
      const { withEtcdMembers } = await import("../etcd/etcd-members.js");
      const { HistoryShape } = await import("../output/shapes/history-shape.js");
      const rawLimit = opts.limit?.trim() ?? String(DEFAULT_HISTORY_LIMIT);
      if (!/^[1-9][0-9]{0,5}$/.test(rawLimit))
        throw new CliError("invalid-input", `--limit: "${rawLimit}" is not a whole number from 1`);
      const settings = ctx.settings(cmd);
      await withEtcdMembers(settings, async (members) => {
        const stored = await readNewestAuditRecords(
          members,
          settings.auditPrefix,
          Number(rawLimit),
        );
        const result: HistoryResult = {
          audit_prefix: settings.auditPrefix,
          records: [],
          invalid: [],
        };
        for (const s of stored) {
          if (s.ok) result.records.push({ ...s.record, commit_revision: s.commitRevision });
          else result.invalid.push({ key: s.key, epoch: s.epoch, problem: s.problem });
        }
        ctx.emit(result, { schema: HistoryShape, text: historyText });
      });
      ctx.exit(ExitCode.ok);
    });
}
