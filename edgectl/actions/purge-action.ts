import { CliError } from "../cli/cli-error.js";
import { edgeToken } from "../cli/edge-token.js";
import { ExitCode } from "../cli/exit-codes.js";
import type { CommandContext } from "../output/command-context.js";
import { PurgeShape } from "../output/shapes/purge-shape.js";
import { purgeAtEdge } from "../purge/edge-purge.js";

/** `purge`'s options as commander parses them. */
export interface PurgeOptions {
  readonly edge?: string;
  readonly tokenFile?: string;
  readonly timeout: string;
}

function httpUrl(flag: string, raw: string): URL {
  const url = URL.canParse(raw) ? new URL(raw) : null;
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password)
    throw new CliError("usage", `${flag}: not an absolute http(s) URL without credentials`);
  return url;
}

/** Runs `edgectl purge`: each URL's cached copies dropped at the location that answers. */
export async function purgeAction(
  ctx: CommandContext,
  raw: string[],
  opts: PurgeOptions,
): Promise<void> {
  const urls = raw.map((u, i) => httpUrl(`URL ${i + 1}`, u).href);
  const timeout = Number(opts.timeout);
  if (!Number.isFinite(timeout) || timeout <= 0)
    throw new CliError("usage", `--timeout: "${opts.timeout}" must be a number > 0`);
  const token = await edgeToken(ctx.io.env, "PURGE_TOKEN", opts.tokenFile);
  const fixed = opts.edge ?? ctx.io.env.EDGE_URL;
  const edgeOf = (u: string) => (fixed ? httpUrl("--edge", fixed) : new URL(u)).origin;
  const byEdge = new Map<string, string[]>();
  for (const u of urls) byEdge.set(edgeOf(u), [...(byEdge.get(edgeOf(u)) ?? []), u]);
  const timeoutMs = timeout * 1000;
  const purged = [];
  for (const [edge, list] of byEdge) {
    for (const p of await purgeAtEdge({ edge: new URL(edge), token, urls: list, timeoutMs }))
      purged.push({ ...p, edge });
  }
  ctx.emit(
    { purged },
    {
      schema: PurgeShape,
      text: (r) =>
        r.purged.map(
          (p) =>
            `${p.url}: ${p.removed === 0 ? "no copy" : `${p.removed} cop${p.removed === 1 ? "y" : "ies"}`} removed at ${p.location ?? "the location that answered"}`,
        ),
    },
  );
  ctx.print(
    "The cache is per location: other Cloudflare locations keep their copies until they expire.",
  );
  ctx.exit(ExitCode.ok);
}
