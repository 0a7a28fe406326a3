import type { Command } from "commander";
import { withEtcdMembers } from "../../adapters/etcd-members.js";
import {
  type CarriedState,
  carriedState,
  compile,
  parseSteerSettings,
  safeText,
} from "../../core/index.js";
import { CliError } from "../cli/cli-error.js";
import { compileOptions } from "../cli/compile-options.js";
import { ExitCode } from "../cli/exit-codes.js";
import { parseTargetArgument } from "../cli/target-argument.js";
import { readPrefixFromAny, toSnapshot } from "../etcd/read-prefix.js";
import { countrySteering } from "../explain/country-steering.js";
import { countryViewers } from "../explain/country-viewers.js";
import { explainContinent } from "../explain/explain-continent.js";
import { dependsOnLastGood, explainCountry } from "../explain/explain-country.js";
import { kvDependence } from "../explain/kv-dependence.js";
import type { CommandContext } from "../output/command-context.js";
import { continentDocument, countryDocument } from "../output/explain-document.js";
import { formatContinentExplanation, formatExplanation } from "../output/explain-text.js";
import { ExplainShape } from "../output/shapes/explain-shape.js";
import { SteeringShape } from "../output/shapes/steering-shape.js";
import { formatSteering } from "../output/steering-text.js";
import { readKvMaps } from "../status/kv-read.js";

/** The options `explain` takes, as commander parses them. */
export interface ExplainOptions {
  readonly kv: boolean;
  readonly steering?: string;
  readonly steerTtl?: string;
  readonly steerParam?: string;
}

/**
 * Runs `edgectl explain CC|K`: compiles from etcd (and KV's carried state when the route depends
 * on it) and prints the country's route and why, its viewers, or its steering manifest; or a
 * continent's rule and the countries it covers.
 */
export async function explainAction(
  ctx: CommandContext,
  raw: string,
  opts: ExplainOptions,
  cmd: Command,
): Promise<void> {
  const { target, name } = parseTargetArgument(raw);
  const steerFormat = opts.steering?.toLowerCase();
  if (steerFormat !== undefined && steerFormat !== "hls" && steerFormat !== "dash")
    throw new CliError("usage", `--steering: "${safeText(steerFormat, 20)}" is not hls or dash`);
  if (steerFormat !== undefined && target.kind !== "country")
    throw new CliError("usage", "--steering explains a country (CC or _default), not a continent");
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
}
