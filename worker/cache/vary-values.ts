import { cgiHeaderName } from "../cgi-header-name.js";
import { EDGE_HEADERS } from "../edge-headers.js";
import { isForwardingClaim } from "../forwarding-headers.js";

const COUNTRY = EDGE_HEADERS.country.toLowerCase();
const ATTR = "x-edge-attr-";

/**
 * The values, as the origin saw them, of the request headers a response varies on: the
 * viewer's own headers, the edge's `X-Edge-Country`, and the market attributes (already in the
 * key). `null` when the response varies on something the edge sets per request or per pool
 * (`X-Edge-Pool`, the signature, forwarding headers): such a copy would be one pool's or one
 * viewer's, so it is not kept.
 */
export function varyValues(
  names: readonly string[],
  request: Headers,
  country: string,
): Record<string, string> | null {
  const out: Record<string, string> = {};
  for (const name of names) {
    const cgi = cgiHeaderName(name);
    if (cgi === COUNTRY) out[name] = country;
    else if (cgi.startsWith(ATTR)) out[name] = "";
    else if (isForwardingClaim(name)) return null;
    else out[name] = request.get(name) ?? "";
  }
  return out;
}

/** True when the request's values of the stored copy's `Vary` headers are the ones it was kept for. */
export function varyMatches(
  stored: Readonly<Record<string, string>>,
  request: Headers,
  country: string,
): boolean {
  const now = varyValues(Object.keys(stored), request, country);
  if (now === null) return false;
  for (const name of Object.keys(stored)) if (now[name] !== stored[name]) return false;
  return true;
}
