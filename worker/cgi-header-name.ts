/**
 * A header name as a CGI origin reads it, in lower case: CGI, and PHP, FastCGI and WSGI after
 * it, turn `X-Edge-Country` and `X_Edge_Country` alike into `HTTP_X_EDGE_COUNTRY` (RFC 3875
 * §4.1.18), and the one sent last wins. So `X_Edge_Country` → `x-edge-country`: two names
 * with the same result are the same header to such an origin.
 */
export function cgiHeaderName(name: string): string {
  const lower = name.toLowerCase();
  return lower.includes("_") ? lower.replaceAll("_", "-") : lower;
}
