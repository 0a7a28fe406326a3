import type { Command } from "commander";
import { withEtcdMembers } from "../../adapters/etcd-members.js";
import { safeText } from "../../core/contract/safe-text.js";
import { readNewestAuditRecords } from "../audit/audit-read.js";
import { CliError } from "../cli/cli-error.js";
import { ExitCode } from "../cli/exit-codes.js";
import type { CommandContext } from "../output/command-context.js";
import { type HistoryResult, HistoryShape } from "../output/shapes/history-shape.js";

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

/** `edgectl history`'s action (`edgectl/commands/history.ts` defines its arguments and options). */
export async function historyAction(
  ctx: CommandContext,
  opts: { readonly limit: string },
  cmd: Command,
): Promise<void> {
  const rawLimit = opts.limit.trim();
  if (!/^[1-9][0-9]{0,5}$/.test(rawLimit))
    throw new CliError("invalid-input", `--limit: "${rawLimit}" is not a whole number from 1`);
  const settings = ctx.settings(cmd);
  await withEtcdMembers(settings, async (members) => {
    const stored = await readNewestAuditRecords(members, settings.auditPrefix, Number(rawLimit));
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
}
