import { cgiHeaderName } from "./cgi-header-name.js";
import { isEdgeHeader } from "./edge-headers.js";

/** Request headers that claim the path a request came by, as `cgiHeaderName` spells them. */
const CLAIMED = new Set(["forwarded", "x-real-ip", "true-client-ip"]);

/**
 * True for a request header the edge never passes on, because it claims what only the edge or
 * Cloudflare may tell an origin: the path the request came by (`Forwarded`, `X-Forwarded-*`,
 * `X-Real-IP`, `True-Client-IP`), the edge's decision (`X-Edge-*`), or Cloudflare's own account
 * (`CF-*`). Names compare as a CGI origin reads them (`cgiHeaderName`: any case, `_` for `-`),
 * so `X_Forwarded_For` cannot stand in for `X-Forwarded-For` there. `CF-*` goes only when
 * spelled with `_`: `CF-Connecting-IP` and its kin are Cloudflare's to set, a `CF_Connecting_IP`
 * is the client's, and a CGI origin would read it as Cloudflare's.
 */
export function isForwardingClaim(name: string): boolean {
  const cgi = cgiHeaderName(name);
  if (CLAIMED.has(cgi) || cgi.startsWith("x-forwarded-") || isEdgeHeader(cgi)) return true;
  return cgi.startsWith("cf-") && name.includes("_");
}

/** `scheme` and `host[:port]` of an absolute URL, without parsing it as a whole. */
function publicParts(url: string): { proto: string; host: string } {
  const colon = url.indexOf(":");
  const start = colon + 3;
  let end = url.length;
  for (const c of ["/", "?", "#"]) {
    const at = url.indexOf(c, start);
    if (at !== -1 && at < end) end = at;
  }
  return { proto: url.slice(0, colon).toLowerCase(), host: url.slice(start, end) };
}

/**
 * Sets the edge's own account of the path a request came by: `X-Forwarded-For` from
 * `CF-Connecting-IP` (set by Cloudflare, never by the client), `X-Forwarded-Host` and
 * `X-Forwarded-Proto` from the public request `url`. The client's own claims (`Forwarded`,
 * `X-Forwarded-*`, `X-Real-IP`, `True-Client-IP`: all forgeable, see `isForwardingClaim`) must
 * be gone from `headers` already; `headers` is changed in place. Returns the public host.
 */
export function setForwardingHeaders(
  headers: Headers,
  connectingIp: string | null,
  url: string,
): string {
  if (connectingIp) headers.set("X-Forwarded-For", connectingIp);
  const { proto, host } = publicParts(url);
  headers.set("X-Forwarded-Host", host);
  headers.set("X-Forwarded-Proto", proto);
  return host;
}
