import { Command } from "commander";
import type { CompiledMap } from "../../core/index.js";
import { type CommandContext, withCommonOptions } from "../command-context.js";
import { ExitCode } from "../exit-codes.js";

/** `edgectl explain CC [--json]`: resolves CC exactly as the compiler would now, and says why. */
export function explainCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("explain"))
    .description("show how a country is routed right now, and why")
    .argument("<cc>", "country code (ISO 3166-1 alpha-2, XX, T1) or _default")
    .option("--json", "print the explanation as JSON")
    .option("--no-kv", "do not read KV for last valid rules (an invalid rule then falls back)")
    .action(async (raw: string, opts: { json?: boolean; kv: boolean }, cmd: Command) => {
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { compileOptions } = await import("../compile-options.js");
      const { parseCountryArgument } = await import("../country-argument.js");
      const { readPrefixFromAny, toSnapshot } = await import("../etcd-client.js");
      const { withEtcdMembers } = await import("../etcd-members.js");
      const { dependsOnLastGood, explainCountry, formatExplanation } = await import(
        "../explain-country.js"
      );
      const { readKvMaps } = await import("../kv-read.js");
      const cc = parseCountryArgument(raw);
      const settings = ctx.settings(cmd);
      const read = await withEtcdMembers(settings, (members) =>
        readPrefixFromAny(members, settings.prefix),
      );
      const snapshot = toSnapshot(read);
      const options = compileOptions(settings);
      let previous: CompiledMap | null = null;
      let history: string | undefined;
      if (dependsOnLastGood(snapshot, cc, options)) {
        if (!opts.kv) history = "KV not read (--no-kv): last valid rules are not shown";
        else {
          const kv = await readKvMaps(ctx.io);
          previous = kv.routes;
          history = kv.error
            ? `KV not readable (${kv.error}): last valid rules are not shown`
            : kv.routes
              ? `last valid rules from KV routes at revision ${kv.routes.rev}`
              : "KV holds no routes map: there are no last valid rules";
        }
      }
      const x = explainCountry(snapshot, cc, { ...options, previous }, history);
      if (opts.json) ctx.print(JSON.stringify(x));
      else ctx.print(...formatExplanation(x));
      ctx.exit(ExitCode.ok);
    });
}
