import { cgiHeaderName } from "./cgi-header-name.js";

/** Header names the edge reads and writes. */
export const EDGE_HEADERS = {
  pool: "X-Edge-Pool",
  country: "X-Edge-Country",
  revision: "X-Edge-Revision",
  source: "X-Edge-Source",
  degraded: "X-Edge-Degraded",
  failover: "X-Edge-Failover",
  split: "X-Edge-Split",
  shed: "X-Edge-Shed",
  fence: "X-Edge-Fence",
  canary: "X-Edge-Canary",
  origin: "X-Edge-Origin",
  cache: "X-Edge-Cache",
  hop: "X-Edge-Hop",
  debugToken: "X-Edge-Debug-Token",
  debugCountry: "X-Edge-Debug-Country",
  debugViewer: "X-Edge-Debug-Viewer",
} as const;

/**
 * True for a header in the edge's own `X-Edge-*` namespace (`X-Edge-Attr-*` included) in any
 * spelling a CGI origin reads as one of them: any case, `_` for `-` (`X_Edge_Country`).
 */
export function isEdgeHeader(name: string): boolean {
  return cgiHeaderName(name).startsWith("x-edge-");
}
