import type { CompiledMap, Route } from "../core/contract/compiled-map.js";

const hostnames = new Map<string, string | null>();

/** The canonical host of an origin URL (`canonicalHost`, no port); `null` if unparsable. */
export function originHostname(origin: string): string | null {
  let host = hostnames.get(origin);
  if (host !== undefined) return host;
  try {
    host = canonicalHost(new URL(origin).hostname);
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

/** `[::ffff:7f00:1]`, the form the URL parser gives an IPv4-mapped IPv6 address. */
const V4_MAPPED = /^\[::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})\]$/;

/** `[::ffff:7f00:1]` → `127.0.0.1`: a browser reaches the same IPv4 host through either. */
function unmapV4(host: string): string {
  const m = V4_MAPPED.exec(host);
  if (!m) return host;
  const hi = Number.parseInt(m[1] ?? "0", 16);
  const lo = Number.parseInt(m[2] ?? "0", 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

const canonical = new Map<string, string>();

/**
 * A host as the URL parser reads it, so every spelling a browser follows to the same host
 * compares equal: IPv6 compressed (`[0:0:0:0:0:0:0:1]` → `[::1]`), IPv4 in any notation
 * (`127.1`, `0x7f.0.0.1`) and IPv4-mapped IPv6 as dotted quads, percent-escapes decoded,
 * international names in their `xn--` form, then `normalizeHost`. A bare IPv6 address (a cookie
 * `Domain`) is read as if bracketed; text the parser refuses is only `normalizeHost`ed.
 */
export function canonicalHost(host: string): string {
  let out = canonical.get(host);
  if (out !== undefined) return out;
  const bracketed = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  try {
    out = normalizeHost(unmapV4(new URL(`http://${bracketed}/`).hostname));
  } catch {
    out = normalizeHost(host);
  }
  // Hosts come from a response's few URL headers; the bound only matters for a hostile origin.
  if (canonical.size >= 1024) canonical.clear();
  canonical.set(host, out);
  return out;
}

function addRoute(into: Set<string>, route: Route): void {
  for (const origin of [route.origin, ...route.chain.map((l) => l.origin)]) {
    const host = originHostname(origin);
    if (host) into.add(host);
  }
}

const byMap = new WeakMap<CompiledMap, ReadonlySet<string>>();

/**
 * Every origin host name the edge could proxy to: all of the map's routes and chains, the
 * canary's too (computed
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
    if (map.canary?.default) addRoute(all, map.canary.default);
    for (const r of Object.values(map.canary?.countries ?? {})) addRoute(all, r);
    hosts = all;
    byMap.set(map, all);
  }
  const own = new Set<string>();
  for (const route of extra) addRoute(own, route);
  if (!hosts) return own;
  for (const h of own) if (!hosts.has(h)) return new Set([...hosts, ...own]);
  return hosts;
}
