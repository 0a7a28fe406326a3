/** A request URL with the pathway parameter taken out. */
export interface PathwayQuery {
  /** The value of the first occurrence, decoded; `""` when it had none. */
  readonly pathway: string;
  /** The URL without any occurrence of the parameter, every other byte as it was. */
  readonly url: string;
}

function decodedName(raw: string): string {
  try {
    return decodeURIComponent(raw.replaceAll("+", " ")).toLowerCase();
  } catch {
    return raw.toLowerCase();
  }
}

/**
 * Finds the pathway parameter `param` in `url`'s query and removes it: every occurrence, in any
 * case and any percent-encoding of its name (an origin may decode or fold names, so none of them
 * reaches it). `null` when the query has no such parameter (the URL is then left alone).
 */
export function takePathway(url: string, param: string): PathwayQuery | null {
  const q = url.indexOf("?");
  if (q === -1) return null;
  const hash = url.indexOf("#", q);
  const end = hash === -1 ? url.length : hash;
  const query = url.slice(q + 1, end);
  const wanted = param.toLowerCase();
  const lower = query.toLowerCase();
  if (!lower.includes(wanted) && !query.includes("%")) return null;
  let pathway: string | null = null;
  const kept: string[] = [];
  for (const part of query.split("&")) {
    const eq = part.indexOf("=");
    const name = eq === -1 ? part : part.slice(0, eq);
    if (decodedName(name) !== wanted) {
      kept.push(part);
      continue;
    }
    if (pathway === null) pathway = eq === -1 ? "" : decodedName(part.slice(eq + 1));
  }
  if (pathway === null) return null;
  const rest = kept.join("&");
  return { pathway, url: url.slice(0, rest === "" ? q : q + 1) + rest + url.slice(end) };
}
