import { Command } from "commander";
import type { CommandContext } from "../cli/command-context.js";
import { withCommonOptions } from "../cli/command-context.js";
import { ExitCode } from "../cli/exit-codes.js";

/** `edgectl validate FILE`: 0 valid, 1 invalid (each problem printed with its key). */
export function validateCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("validate"))
    .description("validate a desired-state file (YAML or JSON)")
    .argument("<file>", "desired-state file")
    .action(async (file: string, _opts: unknown, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { desiredStateToKeys } = await import("../../core/index.js");
      const { loadDesiredState } = await import("../apply/load-desired-state.js");
      const { originWarnings } = await import("../apply/origin-warnings.js");
      const { assertNoNewFenceViolations } = await import("../apply/fence-refusal.js");
      const { compileOptions } = await import("../cli/compile-options.js");
      const { ValidateShape } = await import("../output/shapes/validate-shape.js");
      const state = await loadDesiredState(file);
      ctx.warn(...originWarnings(state));
      const intent = desiredStateToKeys(state, "");
      const keys = [...intent.keys()];
      // The file on its own (no etcd): a rule that crosses a fence is refused here already.
      const entries = keys.map((key) => ({ key, value: intent.get(key) ?? "" }));
      const settings = ctx.settings(cmd);
      assertNoNewFenceViolations(
        null,
        { revision: 0, entries },
        { ...compileOptions(settings, null), prefix: "" },
        file,
      );
      ctx.emit(
        {
          file,
          valid: true as const,
          pools: Object.keys(state.pools).sort(),
          rules: keys.filter((k) => !k.startsWith("pool/") && !k.startsWith("fence/")).sort(),
          fences: Object.keys(state.fences ?? {}).sort(),
        },
        {
          schema: ValidateShape,
          text: (r, paint) => [
            `${r.file} is ${paint("green", "valid")}: ${r.pools.length} pools, ${r.rules.length} country rules${r.fences.length > 0 ? `, fences ${r.fences.join(", ")}` : ""}`,
          ],
        },
      );
      ctx.exit(ExitCode.ok);
    });
}
