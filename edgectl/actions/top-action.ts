import type { Command } from "commander";
import { withEtcdMembers } from "../../adapters/etcd-members.js";
import { decodeSnapshot, isCountryCode, OBSERVATION_WINDOW_S, safeText } from "../../core/index.js";
import { edgeReader } from "../../observer/edge-reader.js";
import { ObserveFailure } from "../../observer/observe-failure.js";
import { CliError, type CliErrorCode } from "../cli/cli-error.js";
import { parseEdgeUrl } from "../cli/edge-url.js";
import { ExitCode } from "../cli/exit-codes.js";
import { readPrefixFromAny, toSnapshot } from "../etcd/read-prefix.js";
import type { CommandContext } from "../output/command-context.js";
import { TopShape } from "../output/shapes/top-shape.js";
import { formatTop } from "../output/top-text.js";
import { topRows } from "../top/top-rows.js";

/** `top`'s options as commander parses them. */
export interface TopOptions {
  readonly edge?: string;
  readonly window: string;
}

/** How long `top` waits for the edge's answer. */
export const TOP_EDGE_TIMEOUT_MS = 10_000;

/** The CLI error each failed read of the edge is reported as. */
const FAILURE_CODE: Record<string, CliErrorCode> = {
  "edge-unreachable": "unreachable",
  unauthorized: "unauthorized",
  "edge-status": "edge-status",
  "junk-response": "junk-response",
};

/** Runs `edgectl top`: one read of the edge's observations beside the checkers' p90 in etcd. */
export async function topAction(
  ctx: CommandContext,
  raw: string[],
  opts: TopOptions,
  cmd: Command,
): Promise<void> {
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
    withEtcdMembers(settings, (members) => readPrefixFromAny(members, `${settings.prefix}health/`)),
  ]);
  if (doc.status === "rejected") {
    const e = doc.reason;
    if (e instanceof ObserveFailure)
      throw new CliError(FAILURE_CODE[e.code] ?? "unreachable", `the edge: ${e.message}`);
    throw e;
  }
  if (health.status === "rejected") throw health.reason;
  const state = decodeSnapshot(toSnapshot(health.value), settings.prefix);
  const checkersP90 = new Map<string, number>();
  for (const [pool, h] of state.health) if (h.p90_ms !== undefined) checkersP90.set(pool, h.p90_ms);
  const result = topRows(doc.value, checkersP90, new Set(countries));
  ctx.emit(result, { schema: TopShape, text: (r) => formatTop(r, countries) });
  ctx.exit(ExitCode.ok);
}
