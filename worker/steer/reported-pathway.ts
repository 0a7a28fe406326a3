import type { Route } from "../../core/contract/compiled-map.js";

/**
 * The pathway a player says it is on, when it is a pool of the viewer's chain; else `null`.
 * hls.js sends `_HLS_pathway=fra-1`; DASH-IF players a quoted list of the pathways used since
 * the last reload (`_DASH_pathway="fra-1,ams-1"`), whose last one is the latest.
 */
export function reportedPathway(raw: string | null, route: Route): string | null {
  if (raw === null) return null;
  const unquoted =
    raw.length >= 2 && raw.startsWith('"') && raw.endsWith('"') ? raw.slice(1, -1) : raw;
  const names = unquoted.split(",");
  for (let i = names.length - 1; i >= 0; i--) {
    const name = names[i]?.trim() ?? "";
    if (route.chain.some((c) => c.pool === name)) return name;
  }
  return null;
}
