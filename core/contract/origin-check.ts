import { hostKind } from "./ip-literal-host.js";

/** Longest host name an origin may have: the DNS limit. */
export const MAX_HOST_CHARS = 253;

/**
 * Why a text is not an origin: `ip-literal-origin` for an IP-literal host other than loopback
 * (a Worker cannot fetch one), `invalid-origin` for everything else.
 */
export type OriginProblemCode = "invalid-origin" | "ip-literal-origin";

/** Why a Worker in production refuses an IP-literal origin (shown with the key that holds it). */
export const IP_LITERAL_PROBLEM =
  "an IP-literal host, which a Worker cannot fetch (Cloudflare error 1003): use a DNS name";

/** The warning a loopback origin gets: allowed for the local stack and tests only. */
export const LOOPBACK_WARNING =
  "a loopback address: fine for the local stack and tests, but a Worker in production cannot fetch it";

/**
 * An origin checked: its normalized form (`https://fra-1.example.net`) with a warning when only a
 * local Worker can reach it, or why it is not one.
 */
export type OriginCheck =
  | { readonly ok: true; readonly origin: string; readonly warning?: string }
  | { readonly ok: false; readonly code: OriginProblemCode; readonly problem: string };

const invalid = (problem: string): OriginCheck => ({ ok: false, code: "invalid-origin", problem });

/**
 * `s` as a bare http(s) origin: an absolute http(s) URL with no path, query, fragment or
 * credentials, and no port 0 (a trailing `/`, any case and a default port are fine), whose host
 * is a DNS name or loopback (docs/reference.md §2), parsed once. Plain code, no
 * zod: `OriginSchema` (pusher, edgectl) and the Worker's `ORIGIN_TEMPLATE` check share it.
 */
export function checkOrigin(s: string): OriginCheck {
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return invalid("not an absolute URL");
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    return invalid("scheme must be https: or http:");
  if (url.username || url.password) return invalid("must not contain credentials");
  // Port 0 parses, but nothing can be reached there (a TCP connect to it fails at once).
  if (url.port === "0") return invalid("port must be 1-65535");
  // Checked on the text: URL parsing folds "/./" and "/.." into "/".
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#\\]+\/?$/i.test(s.trim())) {
    return invalid("must not have a path, query or fragment");
  }
  // DNS names end at 253 characters; this also bounds every route in the map (docs/reference.md §3.6).
  if (url.hostname.length > MAX_HOST_CHARS)
    return invalid(`host name over ${MAX_HOST_CHARS} characters`);
  const kind = hostKind(url.hostname);
  if (kind === "ip") return { ok: false, code: "ip-literal-origin", problem: IP_LITERAL_PROBLEM };
  if (kind === "loopback-ip") return { ok: true, origin: url.origin, warning: LOOPBACK_WARNING };
  return { ok: true, origin: url.origin };
}

/** Why `s` is not a bare http(s) origin ({@link checkOrigin}), or `null`. */
export function originProblem(s: string): string | null {
  const c = checkOrigin(s);
  return c.ok ? null : c.problem;
}
