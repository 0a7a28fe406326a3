import { Command } from "commander";
import { CliError } from "../cli/cli-error.js";
import { ExitCode } from "../cli/exit-codes.js";
import { type CommandContext, withCommonOptions } from "../output/command-context.js";

interface PurgeOptions {
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

/**
 * `edgectl purge URL… [--edge URL] [--token-file FILE]`: removes the URLs' cached copies
 * through the edge's `POST /__edge/purge` (bearer `PURGE_TOKEN`). The Cache API is per
 * location: only the location that answers drops its copies (docs/caching.md).
 */
export function purgeCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("purge"))
    .description(
      "remove cached copies of public URLs at the edge location that answers (the cache is per location)",
    )
    .argument("<url...>", "public URLs as viewers request them")
    .option(
      "--edge <url>",
      "send the purge here (default: each URL's own scheme and host; EDGE_URL)",
    )
    .option("--token-file <path>", "read the edge's PURGE_TOKEN from this file")
    .option("--timeout <seconds>", "how long the edge may take to answer", "10")
    .action(async (raw: string[], opts: PurgeOptions) => {
      const { purgeAtEdge } = await import("../purge/edge-purge.js");
      const { PurgeShape } = await import("../output/shapes/purge-shape.js");
      const urls = raw.map((u, i) => httpUrl(`URL ${i + 1}`, u).href);
      const timeout = Number(opts.timeout);
      if (!Number.isFinite(timeout) || timeout <= 0)
        throw new CliError("usage", `--timeout: "${opts.timeout}" must be a number > 0`);
      let token = ctx.io.env.PURGE_TOKEN ?? "";
      if (opts.tokenFile !== undefined) {
        const { readFile } = await import("node:fs/promises");
        try {
          token = (await readFile(opts.tokenFile, "utf8")).trim();
        } catch (e) {
          throw new CliError(
            "invalid-input",
            `--token-file: cannot read ${opts.tokenFile} (${(e as NodeJS.ErrnoException).code ?? "error"})`,
          );
        }
      }
      if (!token)
        throw new CliError(
          "usage",
          "the edge's token is required: PURGE_TOKEN, or --token-file (an empty file is no token)",
        );
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
    });
}
