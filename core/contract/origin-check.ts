/** Longest host name an origin may have: the DNS limit. */
export const MAX_HOST_CHARS = 253;

/** An origin checked: its normalized form (`https://fra-1.example.net`), or why it is not one. */
export type OriginCheck =
  | { readonly ok: true; readonly origin: string }
  | { readonly ok: false; readonly problem: string };

/**
 * `s` as a bare http(s) origin: an absolute http(s) URL with no path, query, fragment or
 * credentials, and no port 0 (a trailing `/`, any case and a default port are fine), parsed once. Plain code, no
 * zod: `OriginSchema` (pusher, edgectl) and the Worker's `ORIGIN_TEMPLATE` check share it.
 */
export function checkOrigin(s: string): OriginCheck {
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return { ok: false, problem: "not an absolute URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return { ok: false, problem: "scheme must be https: or http:" };
  if (url.username || url.password) return { ok: false, problem: "must not contain credentials" };
  // Port 0 parses, but nothing can be reached there (a TCP connect to it fails at once).
  if (url.port === "0") return { ok: false, problem: "port must be 1-65535" };
  // Checked on the text: URL parsing folds "/./" and "/.." into "/".
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#\\]+\/?$/i.test(s.trim())) {
    return { ok: false, problem: "must not have a path, query or fragment" };
  }
  // DNS names end at 253 characters; this also bounds every route in the map (docs/reference.md §3.6).
  if (url.hostname.length > MAX_HOST_CHARS)
    return { ok: false, problem: `host name over ${MAX_HOST_CHARS} characters` };
  return { ok: true, origin: url.origin };
}

/** Why `s` is not a bare http(s) origin ({@link checkOrigin}), or `null`. */
export function originProblem(s: string): string | null {
  const c = checkOrigin(s);
  return c.ok ? null : c.problem;
}
