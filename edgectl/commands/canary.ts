import { Command } from "commander";
import type { CanaryEndOptions } from "../actions/canary-action.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/**
 * `edgectl canary status|promote|abort` (docs/reference.md §13): the running canary, and ending
 * it by hand. `promote` commits its intent as a plain apply would (lock, epoch CAS, audit record
 * `canary-promote`); `abort` removes it (record `canary-abort`): the stable intent never changed.
 */
export function canaryCommand(ctx: CommandContext): Command {
  const status = withCommonOptions(new Command("status"))
    .description("show the running canary: share, start, gates and changes")
    .action(async (_opts: unknown, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { canaryStatusAction } = await import("../actions/canary-action.js");
      await canaryStatusAction(ctx, cmd);
    });
  const ender = (how: "promote" | "abort", what: string) =>
    withCommonOptions(new Command(how))
      .description(what)
      .option("--id <id>", "refuse unless this canary (c12) is the one running")
      .option("--reason <text>", "why (kept in the audit record; see edgectl history)")
      .action(async (opts: CanaryEndOptions, cmd: Command) => {
        // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
        const { canaryEndAction } = await import("../actions/canary-action.js");
        await canaryEndAction(ctx, how, opts, cmd);
      });
  return withCommonOptions(new Command("canary"))
    .description("the routing change rolled out to a share of viewers first")
    .addCommand(status)
    .addCommand(ender("promote", "commit the running canary's intent for every viewer now"))
    .addCommand(
      ender("abort", "remove the running canary: every viewer back on the stable intent"),
    );
}
