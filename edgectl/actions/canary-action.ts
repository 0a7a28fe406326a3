import type { Command } from "commander";
import { withEtcdMembers } from "../../adapters/etcd-members.js";
import { safeText } from "../../core/index.js";
import { endCanary } from "../apply/canary-end.js";
import { formatGates } from "../apply/canary-gates.js";
import { type CanaryJudgeState, canaryJudgeState } from "../apply/canary-judge-state.js";
import { planValueText } from "../apply/plan-diff.js";
import { runningCanary } from "../apply/running-canary.js";
import { ExitCode } from "../cli/exit-codes.js";
import { readPrefixFromAny } from "../etcd/read-prefix.js";
import type { CommandContext } from "../output/command-context.js";
import { CanaryEndShape, CanaryStatusShape } from "../output/shapes/canary-shape.js";

/** `canary promote|abort`'s options as commander parses them. */
export interface CanaryEndOptions {
  readonly id?: string;
  readonly reason?: string;
}

/** The judge's lines of `canary status`: the verdict with its figures, or why it is frozen. */
function judgeLines(judge: CanaryJudgeState | null, forS: number): string[] {
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

/** Runs `edgectl canary status`: the running canary, its gates and the judge's verdict. */
export async function canaryStatusAction(ctx: CommandContext, cmd: Command): Promise<void> {
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
            ...judgeLines(judge, canary.for_s),
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
}

/** Runs `edgectl canary promote|abort`: ends the running canary through the apply commit. */
export async function canaryEndAction(
  ctx: CommandContext,
  how: "promote" | "abort",
  opts: CanaryEndOptions,
  cmd: Command,
): Promise<void> {
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
}
