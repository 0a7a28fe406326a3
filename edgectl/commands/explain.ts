import { Command } from "commander";
import type { CarriedState } from "../../core/index.js";
import { ExitCode } from "../cli/exit-codes.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/** The options `explain` takes. */
interface ExplainOptions {
  readonly kv: boolean;
  readonly steering?: string;
  readonly steerTtl?: string;
  readonly steerParam?: string;
}

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
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      const { carriedState, compile, parseSteerSettings, safeText } = await import(
        "../../core/index.js"
      );
      const { CliError } = await import("../cli/cli-error.js");
      const { compileOptions } = await import("../cli/compile-options.js");
      const { parseTargetArgument } = await import("../cli/target-argument.js");
      const { readPrefixFromAny, toSnapshot } = await import("../etcd/read-prefix.js");
      const { withEtcdMembers } = await import("../../adapters/etcd-members.js");
      const { explainContinent } = await import("../explain/explain-continent.js");
      const { dependsOnLastGood, explainCountry } = await import("../explain/explain-country.js");
      const { kvDependence } = await import("../explain/kv-dependence.js");
      const { countryViewers } = await import("../explain/country-viewers.js");
      const { formatContinentExplanation, formatExplanation } = await import(
        "../output/explain-text.js"
      );
      const { readKvMaps } = await import("../status/kv-read.js");
      const { continentDocument, countryDocument } = await import("../output/explain-document.js");
      const { ExplainShape } = await import("../output/shapes/explain-shape.js");
      const { target, name } = parseTargetArgument(raw);
      const steerFormat = opts.steering?.toLowerCase();
      if (steerFormat !== undefined && steerFormat !== "hls" && steerFormat !== "dash")
        throw new CliError(
          "usage",
          `--steering: "${safeText(steerFormat, 20)}" is not hls or dash`,
        );
      if (steerFormat !== undefined && target.kind !== "country")
        throw new CliError(
          "usage",
          "--steering explains a country (CC or _default), not a continent",
        );
      const settings = ctx.settings(cmd);
      const read = await withEtcdMembers(settings, (members) =>
        readPrefixFromAny(members, settings.prefix),
      );
      const snapshot = toSnapshot(read);
      const options = compileOptions(settings, null);
      // A slow pool's shed share steps down from the one in KV (hysteresis): only KV knows it.
      const now = compile(snapshot, options);
      const needsKv =
        [...now.state.pools.values()].some((p) => p.slow_ms !== undefined) ||
        (target.kind === "country"
          ? dependsOnLastGood(snapshot, target.cc, options)
          : now.problems.some((p) => p.key === `continent/${target.continent}`));
      let carried: CarriedState | null = null;
      let history: string | undefined;
      if (needsKv) {
        if (!opts.kv) history = "KV not read (--no-kv): last valid rules are not shown";
        else {
          const kv = await readKvMaps(ctx.io);
          const dependence = kv.error ? kvDependence(now, target) : null;
          if (kv.error && dependence)
            throw new CliError(
              "unreachable",
              `cannot know how the edge routes ${name}: ${dependence}, and KV is not readable (${safeText(kv.error)}); --no-kv shows the route etcd alone compiles, which the edge may not serve`,
            );
          carried = carriedState({ kv: kv.routes });
          history = kv.error
            ? `KV not readable (${kv.error}): last valid rules are not shown`
            : kv.routes
              ? `last valid rules from KV routes at revision ${kv.routes.rev}`
              : "KV holds no routes map: there are no last valid rules";
        }
      }
      if (target.kind === "continent") {
        const x = explainContinent(snapshot, target.continent, { ...options, carried });
        const withHistory = history ? { ...x, reasons: [history, ...x.reasons] } : x;
        ctx.emit(continentDocument(withHistory), {
          schema: ExplainShape,
          text: () => formatContinentExplanation(withHistory),
        });
      } else {
        const x = explainCountry(snapshot, name, { ...options, carried }, history);
        if (steerFormat !== undefined) {
          const { countrySteering } = await import("../explain/country-steering.js");
          const { SteeringShape } = await import("../output/shapes/steering-shape.js");
          const { formatSteering } = await import("../output/steering-text.js");
          const steer = parseSteerSettings({
            STEER_TTL_SECONDS: opts.steerTtl,
            STEER_PARAM: opts.steerParam,
          });
          const s = countrySteering(name, x.route, steerFormat, steer);
          ctx.emit(
            { kind: "steering" as const, revision: x.revision, ...s, shares: [...s.shares] },
            { schema: SteeringShape, text: () => formatSteering(s, x.revision) },
          );
          return ctx.exit(ExitCode.ok);
        }
        const viewers = countryViewers(now.state.observed.get(name), now.state.health);
        ctx.emit(countryDocument(x, viewers), {
          schema: ExplainShape,
          text: () => formatExplanation(x, viewers),
        });
      }
      ctx.exit(ExitCode.ok);
    });
}
