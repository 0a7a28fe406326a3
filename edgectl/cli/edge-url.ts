import { CliError } from "./cli-error.js";

/**
 * The edge's URL from `--edge`, else `EDGE_URL`: an http(s) URL without credentials. Fails
 * `usage` naming the flag when it is missing or not such a URL.
 */
export function parseEdgeUrl(flag: string | undefined, env: string | undefined): URL {
  const raw = flag ?? env;
  if (!raw) throw new CliError("usage", "--edge: the edge's URL is required (or EDGE_URL)");
  const edge = URL.canParse(raw) ? new URL(raw) : null;
  if (!edge || !/^https?:$/.test(edge.protocol) || edge.username || edge.password)
    throw new CliError(
      "usage",
      "--edge: not an http(s) URL without credentials (e.g. https://edge.example.com)",
    );
  return edge;
}
