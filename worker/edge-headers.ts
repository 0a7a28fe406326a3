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
  origin: "X-Edge-Origin",
  hop: "X-Edge-Hop",
  debugToken: "X-Edge-Debug-Token",
  debugCountry: "X-Edge-Debug-Country",
  debugViewer: "X-Edge-Debug-Viewer",
} as const;
