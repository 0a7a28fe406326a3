import type { Command } from "commander";
import { desiredStateToKeys } from "../../core/index.js";
import { assertNoNewFenceViolations } from "../apply/fence-refusal.js";
import { loadDesiredState } from "../apply/load-desired-state.js";
import { originWarnings } from "../apply/origin-warnings.js";
import { compileOptions } from "../cli/compile-options.js";
import { ExitCode } from "../cli/exit-codes.js";
import type { CommandContext } from "../output/command-context.js";
import { ValidateShape } from "../output/shapes/validate-shape.js";

/** `edgectl validate`'s action (`edgectl/commands/validate.ts` defines its arguments and options). */
export async function validateAction(
  ctx: CommandContext,
  file: string,
  _opts: unknown,
  cmd: Command,
): Promise<void> {
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
}
