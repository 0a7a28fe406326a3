import type { Command } from "commander";
import { withEtcdMembers } from "../../adapters/etcd-members.js";
import { decodeSnapshot } from "../../core/index.js";
import { type CanaryFlags, canaryRequestOf } from "../apply/canary-flags.js";
import { canarySides, formatCanarySides } from "../apply/canary-sides.js";
import { canaryStartChange } from "../apply/canary-start.js";
import {
  edgeEffect,
  formatEdgeEffect,
  formatShedding,
  sheddingAfter,
  shiftDocument,
} from "../apply/edge-effect.js";
import { planIntent } from "../apply/intent-plan.js";
import { loadDesiredState } from "../apply/load-desired-state.js";
import { originWarnings } from "../apply/origin-warnings.js";
import { formatDiff } from "../apply/plan-diff.js";
import { changeDocument } from "../apply/plan-document.js";
import { compileOptions } from "../cli/compile-options.js";
import { ExitCode } from "../cli/exit-codes.js";
import { toSnapshot } from "../etcd/read-prefix.js";
import type { CommandContext } from "../output/command-context.js";
import { PlanShape } from "../output/shapes/plan-shape.js";

/** `edgectl plan`'s action (`edgectl/commands/plan.ts` defines its arguments and options). */
export async function planAction(
  ctx: CommandContext,
  file: string,
  opts: CanaryFlags,
  cmd: Command,
): Promise<void> {
  const settings = ctx.settings(cmd);
  const canary = canaryRequestOf(opts);
  const desired = await loadDesiredState(file);
  ctx.warn(...originWarnings(desired));
  await withEtcdMembers(settings, async (members) => {
    const plan = await planIntent(members, settings, desired);
    const snapshot = toSnapshot(plan.read);
    const shifts =
      plan.changes.length > 0
        ? edgeEffect(snapshot, plan.changes, compileOptions(settings, null))
        : [];
    const shedding = sheddingAfter(snapshot, plan.changes, compileOptions(settings, null));
    const epoch = decodeSnapshot(snapshot, settings.prefix).epoch;
    // refuses what a canary cannot carry (a fence/ change), as apply --canary would
    if (canary && plan.changes.length > 0)
      canaryStartChange(
        settings.prefix,
        plan.changes,
        canary,
        epoch + 1,
        "plan",
        undefined,
        new Date(),
      );
    const sides = canary ? canarySides(shifts, canary.share) : null;
    // text mode shows the plan before the problems; JSON mode has one document, the error
    let problems: unknown = null;
    try {
      if (plan.changes.length > 0) plan.assertNoNewProblems();
    } catch (e) {
      if (ctx.mode === "json") throw e;
      problems = e;
    }
    ctx.emit(
      {
        file,
        prefix: settings.prefix,
        revision: plan.read.revision,
        epoch,
        changes: plan.changes.map(changeDocument),
        effect: shifts.map(shiftDocument),
        shedding: shedding.map((r) => ({
          ...r,
          slow_ms: r.slow_ms ? { ...r.slow_ms } : null,
        })),
        ...(canary && sides
          ? {
              canary: {
                share: canary.share,
                for_s: canary.forS,
                gates: { ...canary.gates },
                sides,
              },
            }
          : {}),
      },
      {
        schema: PlanShape,
        text: (r, paint) => [
          `Plan for ${r.prefix} at revision ${r.revision}:`,
          ...formatDiff(plan.changes).map((l) =>
            l.startsWith("  + ")
              ? paint("green", l)
              : l.startsWith("  - ")
                ? paint("red", l)
                : l.startsWith("  ~ ")
                  ? paint("yellow", l)
                  : l,
          ),
          ...(plan.changes.length > 0 ? formatEdgeEffect(shifts) : []),
          ...formatShedding(shedding),
          ...(canary && sides && plan.changes.length > 0 ? formatCanarySides(sides, canary) : []),
        ],
      },
    );
    if (problems) throw problems;
  });
  ctx.exit(ExitCode.ok);
}
