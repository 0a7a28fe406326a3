/** Longest host name an origin may have: the DNS limit. */
export const MAX_HOST_CHARS = 253;

/**
 * Why `s` is not a bare http(s) origin, or `null`: an absolute http(s) URL with no path, query,
 * fragment or credentials (a trailing `/`, any case and a default port are fine). Plain code, no
 * zod: `OriginSchema` (pusher, edgectl) and the Worker's `ORIGIN_TEMPLATE` check share it.
 */
export function originProblem(s: string): string | null {
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return "not an absolute URL";
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return "scheme must be https: or http:";
  if (url.username || url.password) return "must not contain credentials";
  // Checked on the text: URL parsing folds "/./" and "/.." into "/".
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#\\]+\/?$/i.test(s.trim())) {
    return "must not have a path, query or fragment";
  }
  // DNS names end at 253 characters; this also bounds every route in the map (docs/reference.md §3.6).
  if (url.hostname.length > MAX_HOST_CHARS) return `host name over ${MAX_HOST_CHARS} characters`;
  return null;
}
