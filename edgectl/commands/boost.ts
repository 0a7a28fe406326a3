import { Command } from "commander";
import type { BoostOptions } from "../actions/boost-action.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/**
 * `edgectl boost CC --pool P [--fallbacks a,b] [--attr name=value…] --ttl 6h [--reason TEXT]`:
 * writes `override/CC` with `expires_at` under a fresh lease of that TTL. With `--attr` and no
 * `--pool`, the override is the current rule plus the attributes: only the attributes change.
 * 0 written, 1 invalid, 4 etcd unavailable.
 */
export function boostCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("boost"))
    .description("temporarily route a country to a pool: override/CC under a lease that expires")
    .argument("<cc>", "country code, _default, or a continent (EU, OC, AN, continent/NA)")
    .option("--pool <pool>", "primary pool (must have a pool/ definition)")
    .option("--fallbacks <pools>", "comma-separated fallback pools", "")
    .requiredOption("--ttl <duration>", "how long the override lasts: 30s, 15m, 6h, 1d")
    .option("--reason <text>", "why (shown by explain and kept in the override)")
    .option("--percent <n>", "shift N % of the viewers to --pool (the current rule, weighted)")
    .option(
      "--attr <name=value>",
      "a market attribute for the boost's time (repeatable); without --pool the current rule stays",
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .action(async (raw: string, opts: BoostOptions, cmd: Command) => {
      // Lazy: every action static made `edgectl --help` 201 ms, not 76 (bench `cli`: node + 40).
      const { boostAction } = await import("../actions/boost-action.js");
      await boostAction(ctx, raw, opts, cmd);
    });
}
