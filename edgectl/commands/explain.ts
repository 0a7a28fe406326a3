import { Command } from "commander";
import type { ExplainOptions } from "../actions/explain-action.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/**
 * `edgectl explain CC|K`: resolves a country exactly as the compiler would now and says why, or
 * says what a continent's rule does and which countries it covers. When the route depends on KV's
 * map (`kvDependence`) and KV cannot be read, it fails `unreachable` rather than show a route the
 * edge may not serve.
 */
export function explainCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("explain"))
    .description("show how a country (or a continent's rule) routes right now, and why")
    .argument(
      "<cc>",
      "country code (ISO 3166-1 alpha-2, XX, T1), _default, or a continent (EU, AN, OC, continent/NA)",
    )
    .option("--json", "the same as -o json")
    .option("--no-kv", "do not read KV for last valid rules (an invalid rule then falls back)")
    .option(
      "--steering <format>",
      "print the steering manifest (hls or dash) a viewer of CC gets from /__edge/steer/FORMAT",
    )
    .option("--steer-ttl <seconds>", "the Worker's STEER_TTL_SECONDS, for --steering")
    .option("--steer-param <name>", "the Worker's STEER_PARAM, for --steering")
    .action(async (raw: string, opts: ExplainOptions, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { explainAction } = await import("../actions/explain-action.js");
      await explainAction(ctx, raw, opts, cmd);
    });
}
