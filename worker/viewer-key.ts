import { parse } from "hono/utils/cookie";
import { EDGE_HEADERS } from "./edge-headers.js";

/** Longest viewer key hashed; a longer value is cut (it still keys the same viewer). */
const MAX_KEY_CHARS = 256;

/**
 * The key a weighted split hashes (docs/reference.md §4.3): with debug access, `X-Edge-Debug-Viewer`; else
 * the `AFFINITY_COOKIE` cookie's value when that variable is set and the cookie is present; else
 * `CF-Connecting-IP` (set by Cloudflare, not by the client). Without any of them, the empty key:
 * every such request takes the same pool, which is still sticky.
 */
export function viewerKey(request: Request, affinityCookie: string | null, debug: boolean): string {
  const h = request.headers;
  if (debug) {
    const forced = h.get(EDGE_HEADERS.debugViewer);
    if (forced !== null) return forced.slice(0, MAX_KEY_CHARS);
  }
  if (affinityCookie !== null) {
    const header = h.get("Cookie");
    if (header !== null) {
      const value = parse(header, affinityCookie)[affinityCookie];
      if (value !== undefined && value.length > 0) return value.slice(0, MAX_KEY_CHARS);
    }
  }
  return (h.get("CF-Connecting-IP") ?? "").slice(0, MAX_KEY_CHARS);
}

const COOKIE_NAME = /^[\w!#$%&'*.^`|~+-]{1,128}$/;

/** `AFFINITY_COOKIE` when it is a usable cookie name, else `null` (splits key on the IP). */
export function affinityCookieName(raw: unknown): string | null {
  return typeof raw === "string" && COOKIE_NAME.test(raw) ? raw : null;
}
