/** Request headers that carry a client's claim about the path it came by. */
const CLAIMED = new Set(["forwarded", "x-real-ip", "true-client-ip"]);

/** True for a (lower-case) request header that claims a forwarding path: never passed on. */
export function isForwardingClaim(name: string): boolean {
  return CLAIMED.has(name) || name.startsWith("x-forwarded-");
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
