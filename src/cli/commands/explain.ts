import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../command-context.js";
import { compileOptions } from "../compile-options.js";
import { parseCountryArgument } from "../country-argument.js";
import { readPrefix, toSnapshot, withEtcd } from "../etcd-client.js";
import { ExitCode } from "../exit-codes.js";
import { explainCountry, formatExplanation } from "../explain-country.js";

/** `edgectl explain CC [--json]`: resolves CC exactly as the compiler would now, and says why. */
export function explainCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("explain"))
    .description("show how a country is routed right now, and why")
    .argument("<cc>", "country code (ISO 3166-1 alpha-2, XX, T1) or _default")
    .option("--json", "print the explanation as JSON")
    .action(async (raw: string, opts: { json?: boolean }, cmd: Command) => {
      const cc = parseCountryArgument(raw);
      const settings = ctx.settings(cmd);
      const read = await withEtcd(settings, (client) => readPrefix(client, settings.prefix));
      const x = explainCountry(toSnapshot(read), cc, compileOptions(settings));
      if (opts.json) ctx.print(JSON.stringify(x));
      else ctx.print(...formatExplanation(x));
      ctx.exit(ExitCode.ok);
    });
}
