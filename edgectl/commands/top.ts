import { Command } from "commander";
import { CliError, type CliErrorCode } from "../cli/cli-error.js";
import { parseEdgeUrl } from "../cli/edge-url.js";
import { ExitCode } from "../cli/exit-codes.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

/** How long `top` waits for the edge's answer. */
export const TOP_EDGE_TIMEOUT_MS = 10_000;

/** The CLI error each failed read of the edge is reported as. */
const FAILURE_CODE: Record<string, CliErrorCode> = {
  "edge-unreachable": "unreachable",
  unauthorized: "unauthorized",
  "edge-status": "edge-status",
  "junk-response": "junk-response",
};

/**
 * `edgectl top [CC…] --edge URL [--window S]`: what viewers get now per country and pool (the
 * edge's `GET /__edge/observations`), the pool's checkers' p90 from etcd beside the viewers'.
 * The token comes from `OBSERVE_TOKEN` and is never printed.
 */
export function topCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("top"))
    .description(
      "show what viewers get per country and pool now: requests/s, errors, time to first byte, starvation, beside the checkers' p90",
    )
    .argument("[cc...]", "only these countries (ISO 3166-1 alpha-2, XX, T1; commas work too)")
    .option("--edge <url>", "the edge's URL (default: EDGE_URL)")
    .option("--window <seconds>", "the window the edge sums, in whole seconds (1–900)", "60")
    .action(async (raw: string[], opts: { edge?: string; window: string }, cmd: Command) => {
      const {
        isCountryCode,
        OBSERVATION_WINDOW_S,
        decodeSnapshot: readSnapshot,
      } = await import("../../core/index.js");
      const { edgeReader } = await import("../../observer/edge-reader.js");
      const { ObserveFailure } = await import("../../observer/observe-failure.js");
      const { readPrefixFromAny, toSnapshot } = await import("../etcd/read-prefix.js");
      const { withEtcdMembers } = await import("../../adapters/etcd-members.js");
      const { topRows } = await import("../top/top-rows.js");
      const { formatTop } = await import("../output/top-text.js");
      const { TopShape } = await import("../output/shapes/top-shape.js");
      const { safeText } = await import("../../core/index.js");

      const countries = raw.flatMap((a) => a.split(",")).filter((c) => c !== "");
      for (const [i, c] of countries.entries()) {
        const cc = c.toUpperCase();
        if (!isCountryCode(cc))
          throw new CliError("usage", `"${safeText(c, 16)}" is not a country code`);
        countries[i] = cc;
      }
      const windowS = Number(opts.window);
      if (!Number.isInteger(windowS) || windowS < 1 || windowS > OBSERVATION_WINDOW_S.max)
        throw new CliError(
          "usage",
          `--window: "${safeText(opts.window, 16)}" must be whole seconds from 1 to ${OBSERVATION_WINDOW_S.max}`,
        );
      const edge = parseEdgeUrl(opts.edge, ctx.io.env.EDGE_URL);
      const token = ctx.io.env.OBSERVE_TOKEN ?? "";
      if (!token) throw new CliError("usage", "the edge's token is required: OBSERVE_TOKEN");

      const settings = ctx.settings(cmd);
      const read = edgeReader({ edge, token, timeoutMs: TOP_EDGE_TIMEOUT_MS });
      const [doc, health] = await Promise.allSettled([
        read(windowS),
        withEtcdMembers(settings, (members) =>
          readPrefixFromAny(members, `${settings.prefix}health/`),
        ),
      ]);
      if (doc.status === "rejected") {
        const e = doc.reason;
        if (e instanceof ObserveFailure)
          throw new CliError(FAILURE_CODE[e.code] ?? "unreachable", `the edge: ${e.message}`);
        throw e;
      }
      if (health.status === "rejected") throw health.reason;
      const state = readSnapshot(toSnapshot(health.value), settings.prefix);
      const checkersP90 = new Map<string, number>();
      for (const [pool, h] of state.health)
        if (h.p90_ms !== undefined) checkersP90.set(pool, h.p90_ms);
      const result = topRows(doc.value, checkersP90, new Set(countries));
      ctx.emit(result, { schema: TopShape, text: (r) => formatTop(r, countries) });
      ctx.exit(ExitCode.ok);
    });
}
