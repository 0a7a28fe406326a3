import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../cli/command-context.js";
import { ExitCode } from "../cli/exit-codes.js";

/** `edgectl plan FILE`: the diff against etcd and its edge effect under current health. */
export function planCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("plan"))
    .description("validate a file and show what apply would change, and where traffic would move")
    .argument("<file>", "desired-state file")
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { readSnapshot } = await import("../../core/index.js");
      const { compileOptions } = await import("../cli/compile-options.js");
      const { edgeEffect, formatEdgeEffect, formatShedding, sheddingAfter, shiftDocument } =
        await import("../apply/edge-effect.js");
      const { toSnapshot } = await import("../etcd/read-prefix.js");
      const { withEtcdMembers } = await import("../etcd/etcd-members.js");
      const { planIntent } = await import("../apply/intent-plan.js");
      const { loadDesiredState } = await import("../apply/load-desired-state.js");
      const { originWarnings } = await import("../apply/origin-warnings.js");
      const { changeDocument } = await import("../output/plan-document.js");
      const { PlanShape } = await import("../output/shapes/plan-shape.js");
      const { formatDiff } = await import("../apply/plan-diff.js");
      const settings = ctx.settings(cmd);
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
            epoch: readSnapshot(snapshot, settings.prefix).epoch,
            changes: plan.changes.map(changeDocument),
            effect: shifts.map(shiftDocument),
            shedding: shedding.map((r) => ({
              ...r,
              slow_ms: r.slow_ms ? { ...r.slow_ms } : null,
            })),
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
            ],
          },
        );
        if (problems) throw problems;
      });
      ctx.exit(ExitCode.ok);
    });
}
