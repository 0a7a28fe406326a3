import { normalizeCountry } from "../core/contract/resolve.js";
import { EDGE_HEADERS } from "./edge-headers.js";

/**
 * The visitor's country: `request.cf.country`, or `X-Edge-Debug-Country` when the caller
 * proved debug access. `CF-IPCountry` is a plain request header a client can set; never read.
 */
export function requestCountry(request: Request, debug: boolean): string {
  if (debug) {
    const forced = request.headers.get(EDGE_HEADERS.debugCountry);
    if (forced !== null) return normalizeCountry(forced);
  }
  return normalizeCountry(request.cf?.country);
}
