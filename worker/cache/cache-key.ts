import type { Route } from "../../core/contract/compiled-map.js";
import { attrHeaders } from "../attr-headers.js";

/**
 * Where cache keys live: inside the edge's own `/__edge/` namespace, which no viewer URL reaches
 * (it is never proxied), so no public URL can name another's key.
 */
export const CACHE_KEY_PREFIX = "/__edge/cache/";

const ATTR_PREFIX = "x-edge-attr-".length;
const NO_MARKET = "-";
const markets = new WeakMap<object, string>();

/** The route's market attributes as one key segment (`-` when it sends none), once per route attrs. */
export function marketSegment(attrs: Route["attrs"]): string {
  if (!attrs) return NO_MARKET;
  let segment = markets.get(attrs);
  if (segment === undefined) {
    const list = attrHeaders(attrs);
    segment =
      list.length === 0
        ? NO_MARKET
        : encodeURIComponent(list.map((a) => `${a.lower.slice(ATTR_PREFIX)}=${a.value}`).join("&"));
    markets.set(attrs, segment);
  }
  return segment;
}

/**
 * The cache key of a viewer's URL for one market: the public scheme, host, path and query, less
 * the query parameters in `ignoreParams` (any case), with the market segment first in the path.
 * The pool is never part of it. `null` for a URL that cannot be parsed.
 */
export function cacheKeyUrl(
  publicUrl: string,
  ignoreParams: ReadonlySet<string>,
  market: string,
): string | null {
  let url: URL;
  try {
    url = new URL(publicUrl);
  } catch {
    return null;
  }
  let query = url.search;
  if (ignoreParams.size > 0 && query.length > 1) {
    const kept = query
      .slice(1)
      .split("&")
      .filter((pair) => {
        const eq = pair.indexOf("=");
        const raw = eq === -1 ? pair : pair.slice(0, eq);
        let name: string;
        try {
          name = decodeURIComponent(raw.replace(/\+/g, " "));
        } catch {
          name = raw;
        }
        return !ignoreParams.has(name.toLowerCase());
      });
    query = kept.length === 0 ? "" : `?${kept.join("&")}`;
  }
  return `${url.protocol}//${url.host}${CACHE_KEY_PREFIX}${market}${url.pathname}${query}`;
}
