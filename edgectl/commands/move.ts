import { Command } from "commander";
import type { CanaryFlags } from "../canary/canary-flags.js";
import { type CommandContext, withCommonOptions } from "../cli/command-context.js";
import { ExitCode } from "../cli/exit-codes.js";

interface MoveOptions extends CanaryFlags {
  readonly to: string;
  readonly fallbacks?: string;
  readonly reason?: string;
  readonly yes?: boolean;
}

const list = (raw: string) =>
  raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * `edgectl move CC[,CC…] --to POOL [--fallbacks a,b] [--reason TEXT] [--yes]`: the seeds'
 * rebalance. Each country's (or continent's) own rule gets primary POOL, the old primary first
 * among the fallbacks unless `--fallbacks`; committed exactly as `apply` commits (exit codes and
 * `--canary` too).
 */
export function moveCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("move"))
    .description("move countries (or continents) to a pool: the old primary becomes a fallback")
    .argument("<targets>", "comma-separated country codes or continents: DE,FR or EU")
    .requiredOption("--to <pool>", "the new primary pool (must have a pool/ definition)")
    .option("--fallbacks <pools>", "comma-separated fallbacks instead of the old primary and chain")
    .option("--reason <text>", "why (kept in the audit record; see edgectl history)")
    .option("-y, --yes", "apply without asking for confirmation")
    .option("--canary <percent>", "roll out to PERCENT % of each moved route's viewers first")
    .option("--for <duration>", "with --canary: how long the gates must hold (default 10m)")
    .option("--gate <expr>", "with --canary: errors<=+1pt,p90<=x1.25+50ms (the defaults)")
    .option("--min-samples <n>", "with --canary: requests a side needs to be judged (default 200)")
    .action(async (raw: string, opts: MoveOptions, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { CliError } = await import("../cli/cli-error.js");
      const { commitPlan } = await import("../apply/commit-plan.js");
      const { readPrefixFromAny } = await import("../etcd/read-prefix.js");
      const { withEtcdMembers } = await import("../etcd/etcd-members.js");
      const { planOfChanges } = await import("../apply/intent-plan.js");
      const { moveChanges, ruleKey } = await import("../rules/move-rules.js");
      const { commitFields } = await import("../output/apply-document.js");
      const { MoveShape } = await import("../output/shapes/move-shape.js");
      const { parseTargetArgument } = await import("../cli/target-argument.js");
      const targets = list(raw).map((t) => parseTargetArgument(t).target);
      if (targets.length === 0)
        throw new CliError("invalid-input", "move: name at least one country or continent");
      const { canaryRequestOf } = await import("../canary/canary-flags.js");
      const canary = canaryRequestOf(opts);
      const fallbacks = opts.fallbacks === undefined ? undefined : list(opts.fallbacks);
      const settings = ctx.settings(cmd);
      await withEtcdMembers(settings, async (client) => {
        const read = await readPrefixFromAny(client, settings.prefix);
        const { changes, notes } = moveChanges(read, settings.prefix, targets, opts.to, fallbacks);
        const plan = planOfChanges(read, changes, settings);
        const commit = await commitPlan(ctx, client, settings, plan, {
          command: "move",
          reason: opts.reason,
          yes: opts.yes === true,
          notes,
          canary,
        });
        const keys = [...new Set(targets.map(ruleKey))];
        ctx.emit(
          { ...commitFields(settings, plan, commit), targets: keys, to: opts.to, notes },
          {
            schema: MoveShape,
            text: (r, paint) =>
              r.applied
                ? [
                    `${paint("green", "Applied")} ${r.changes.length} changes: epoch ${r.epoch} at revision ${r.commit_revision}.`,
                  ]
                : [
                    `No changes: ${r.targets.join(", ")} already ${r.targets.length === 1 ? "has" : "have"} primary ${r.to} with that chain. Nothing written.`,
                  ],
          },
        );
        ctx.exit(ExitCode.ok);
      });
    });
}
