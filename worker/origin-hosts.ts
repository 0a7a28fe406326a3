import type { CompiledMap, Route } from "../core/compiled-map.js";

const hostnames = new Map<string, string | null>();

/** The lower-case host name of an origin URL (no port, no trailing dot); `null` if unparsable. */
export function originHostname(origin: string): string | null {
  let host = hostnames.get(origin);
  if (host !== undefined) return host;
  try {
    host = normalizeHost(new URL(origin).hostname);
  } catch {
    host = null;
  }
  // Origins come from a handful of pools; the bound only matters for a runaway map.
  if (hostnames.size >= 1024) hostnames.clear();
  hostnames.set(origin, host);
  return host;
}

/** Lower case, without a trailing dot, so `FRA-1.Example.net.` matches `fra-1.example.net`. */
export function normalizeHost(host: string): string {
  const h = host.toLowerCase();
  return h.endsWith(".") ? h.slice(0, -1) : h;
}

function addRoute(into: Set<string>, route: Route): void {
  for (const origin of [route.origin, ...route.chain.map((l) => l.origin)]) {
    const host = originHostname(origin);
    if (host) into.add(host);
  }
}

const byMap = new WeakMap<CompiledMap, ReadonlySet<string>>();

/**
 * Every origin host name the edge could proxy to: all of the map's routes and chains (computed
 * once per map) plus `extra` (the decided route and the floor, which the map may not name).
 */
export function originHostsOf(
  map: CompiledMap | null,
  extra: readonly Route[],
): ReadonlySet<string> {
  let hosts = map ? byMap.get(map) : undefined;
  if (map && !hosts) {
    const all = new Set<string>();
    addRoute(all, map.default);
    for (const r of Object.values(map.countries)) addRoute(all, r);
    hosts = all;
    byMap.set(map, all);
  }
  const own = new Set<string>();
  for (const route of extra) addRoute(own, route);
  if (!hosts) return own;
  for (const h of own) if (!hosts.has(h)) return new Set([...hosts, ...own]);
  return hosts;
}
