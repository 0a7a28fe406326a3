import { Command } from "commander";
import type { CanaryJudgeState } from "../apply/canary-judge-state.js";
import { ExitCode } from "../cli/exit-codes.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/** The judge's lines of `canary status`: the verdict with its figures, or why it is frozen. */
function judgeLines(
  judge: CanaryJudgeState | null,
  forS: number,
  safeText: (t: string, max?: number) => string,
): string[] {
  if (!judge) return [];
  const j = judge.judgement;
  const lines =
    judge.frozen !== null
      ? [`  FROZEN: ${judge.frozen}`]
      : [
          `  judged ${j?.verdict ?? "?"} at ${j?.judged_at ?? "?"} by ${safeText(j?.judge ?? "?", 128)}${
            j?.passing_since
              ? `; passing since ${j.passing_since}, promoted at ${new Date(Date.parse(j.passing_since) + forS * 1000).toISOString()}`
              : ""
          }`,
        ];
  if (j) lines.push(`  ${safeText(j.detail, 400)}`);
  return lines;
}

/**
 * `edgectl canary status|promote|abort` (docs/reference.md §13): the running canary, and ending
 * it by hand. `promote` commits its intent as a plain apply would (lock, epoch CAS, audit record
 * `canary-promote`); `abort` removes it (record `canary-abort`): the stable intent never changed.
 */
export function canaryCommand(ctx: CommandContext): Command {
  const status = withCommonOptions(new Command("status"))
    .description("show the running canary: share, start, gates and changes")
    .action(async (_opts: unknown, cmd: Command) => {
      const { safeText } = await import("../../core/index.js");
      const { withEtcdMembers } = await import("../../adapters/etcd-members.js");
      const { readPrefixFromAny } = await import("../etcd/read-prefix.js");
      const { runningCanary } = await import("../apply/running-canary.js");
      const { canaryJudgeState } = await import("../apply/canary-judge-state.js");
      const { formatGates } = await import("../apply/canary-gates.js");
      const { planValueText } = await import("../apply/plan-diff.js");
      const { CanaryStatusShape } = await import("../output/shapes/canary-shape.js");
      const settings = ctx.settings(cmd);
      await withEtcdMembers(settings, async (members) => {
        const read = await readPrefixFromAny(members, settings.prefix);
        const running = runningCanary(read);
        const canary = running.kind === "running" ? running.canary : null;
        const judge = canary ? canaryJudgeState(read, canary, Date.now()) : null;
        ctx.emit(
          { prefix: settings.prefix, state: running.kind, canary, judge },
          {
            schema: CanaryStatusShape,
            text: () => {
              if (running.kind === "none") return ["No canary is running."];
              if (!canary)
                return [
                  "canary/current holds an invalid value: every viewer routes by the stable intent (edgectl canary abort removes it).",
                ];
              return [
                `Canary ${canary.id}: running, ${canary.share} % of each changed route's viewers since ${canary.started_at}`,
                `  by ${safeText(canary.by, 64)}${canary.reason === null ? "" : `: ${safeText(canary.reason, 200)}`}`,
                `  promoted after ${canary.for_s} s of passing gates: ${formatGates(canary.gates)}`,
                ...judgeLines(judge, canary.for_s, safeText),
                ...canary.changes.map(
                  (c) =>
                    `  ${safeText(c.key, 96)}  ${c.before === null ? "(absent)" : planValueText(c.before)} → ${c.after === null ? "(removed)" : planValueText(c.after)}`,
                ),
              ];
            },
          },
        );
      });
      ctx.exit(ExitCode.ok);
    });
  const ender = (how: "promote" | "abort", what: string) =>
    withCommonOptions(new Command(how))
      .description(what)
      .option("--id <id>", "refuse unless this canary (c12) is the one running")
      .option("--reason <text>", "why (kept in the audit record; see edgectl history)")
      .action(async (opts: { id?: string; reason?: string }, cmd: Command) => {
        const { withEtcdMembers } = await import("../../adapters/etcd-members.js");
        const { endCanary } = await import("../apply/canary-end.js");
        const { CanaryEndShape } = await import("../output/shapes/canary-shape.js");
        const settings = ctx.settings(cmd);
        await withEtcdMembers(settings, async (members) => {
          const reason = opts.reason ?? `${how} by hand`;
          const ended = await endCanary(members, settings, how, reason, opts.id ?? null, (l) =>
            ctx.warn(l),
          );
          ctx.emit(
            { id: ended.id, how, epoch: ended.epoch, commit_revision: ended.revision },
            {
              schema: CanaryEndShape,
              text: (r) => [
                how === "promote"
                  ? `Canary ${r.id} promoted: its intent committed, epoch ${r.epoch} at revision ${r.commit_revision}.`
                  : `Canary ${r.id} aborted: every viewer routes by the stable intent, epoch ${r.epoch} at revision ${r.commit_revision}.`,
              ],
            },
          );
        });
        ctx.exit(ExitCode.ok);
      });
  return withCommonOptions(new Command("canary"))
    .description("the routing change rolled out to a share of viewers first")
    .addCommand(status)
    .addCommand(ender("promote", "commit the running canary's intent for every viewer now"))
    .addCommand(
      ender("abort", "remove the running canary: every viewer back on the stable intent"),
    );
}
