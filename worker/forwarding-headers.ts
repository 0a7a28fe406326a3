/** Request headers that carry a client's claim about the path it came by. */
const CLAIMED = new Set(["forwarded", "x-real-ip", "true-client-ip"]);

function isForwardingClaim(name: string): boolean {
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
 * Replaces whatever forwarding headers the client sent (`Forwarded`, `X-Forwarded-*`,
 * `X-Real-IP`, `True-Client-IP`: all forgeable) with the edge's own account: `X-Forwarded-For`
 * from `CF-Connecting-IP` (set by Cloudflare, never by the client), `X-Forwarded-Host` and
 * `X-Forwarded-Proto` from the public request. In place.
 */
export function setForwardingHeaders(headers: Headers, request: Request): void {
  let doomed: string[] | undefined;
  for (const name of headers.keys()) {
    if (!isForwardingClaim(name)) continue;
    doomed ??= [];
    doomed.push(name);
  }
  if (doomed) for (const name of doomed) headers.delete(name);
  const ip = request.headers.get("CF-Connecting-IP");
  if (ip) headers.set("X-Forwarded-For", ip);
  const { proto, host } = publicParts(request.url);
  headers.set("X-Forwarded-Host", host);
  headers.set("X-Forwarded-Proto", proto);
}
