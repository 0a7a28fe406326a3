import type { ServerResponse } from "node:http";
import { isIPv4, isIPv6 } from "node:net";
import { networkInterfaces, hostname as osHostname } from "node:os";
import { ConfigError } from "./errors.js";

/** A `Host` header's host part: a DNS name, an IPv4 address or a bracketed IPv6 one, then a port. */
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9.-]+)(?::\d{1,5})?$/i;
const NAME = /^[a-z0-9.-]+$/;

/**
 * The canonical form of a host name or address (lower case, no trailing dot, IPv6 without
 * brackets and compressed), or null when it is neither a DNS name nor an IP address.
 */
function canonicalHost(raw: string): string | null {
  const host = raw
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, "$1");
  if (isIPv6(host)) return new URL(`http://[${host}]/`).hostname.slice(1, -1);
  if (isIPv4(host)) return host;
  const name = host.replace(/\.$/, "");
  return name && NAME.test(name) ? name : null;
}

function isLoopback(address: string): boolean {
  return address === "::1" || address === "localhost" || /^127\./.test(address);
}

function isWildcard(address: string): boolean {
  return address === "" || address === "0.0.0.0" || address === "::";
}

/**
 * Parses a comma-separated list of extra host names (`PUSHER_ALLOWED_HOSTS`): DNS names or IP
 * addresses without a port; empty or unset is no extra name.
 */
export function parseAllowedHosts(setting: string, raw: string | undefined): string[] {
  const out: string[] = [];
  for (const entry of (raw ?? "").split(",")) {
    if (!entry.trim()) continue;
    const host = canonicalHost(entry);
    if (!host) {
      throw new ConfigError(
        "invalid-setting",
        setting,
        `"${entry.trim()}" is not a host name or IP address (no scheme, port or path)`,
      );
    }
    out.push(host);
  }
  return out;
}

/** Where a listener is bound, and which names it answers to besides its own. */
export interface HostAllowListOptions {
  /** The host it was asked to listen on (a name, an address, or a wildcard). */
  readonly listenHost: string;
  /** The address it is bound to (`server.address().address`). */
  readonly boundAddress: string;
  /** Extra names (`PUSHER_ALLOWED_HOSTS`, `--allowed-hosts`), already parsed. */
  readonly extra?: readonly string[];
  /** The setting that adds names, named in the 421 answer. */
  readonly setting: string;
}

/**
 * The `Host` names a local HTTP listener answers to, against DNS rebinding: a page in an
 * operator's browser that resolves its own name to the listener's address still sends its own
 * name as `Host`, and is refused with 421. Allowed: the listen host and the bound address, the
 * extra names, `localhost` when bound to loopback, and on a wildcard address the machine's
 * interface addresses and host name. A request without `Host` (an HTTP/1.0 probe; browsers
 * always send one) is served.
 */
export class HostAllowList {
  private readonly names = new Set<string>();
  private readonly wildcard: boolean;

  constructor(private readonly o: HostAllowListOptions) {
    this.wildcard = isWildcard(o.listenHost) || isWildcard(o.boundAddress);
    for (const h of [o.listenHost, o.boundAddress, ...(o.extra ?? [])]) {
      const c = canonicalHost(h);
      if (c) this.names.add(c);
    }
    if (this.wildcard || isLoopback(o.listenHost) || isLoopback(o.boundAddress)) {
      this.names.add("localhost");
    }
    if (this.wildcard) {
      const own = canonicalHost(osHostname());
      if (own) this.names.add(own);
      for (const a of interfaceAddresses()) this.names.add(a);
    }
  }

  /** True when a request with this `Host` header may be answered. */
  allows(hostHeader: string | undefined): boolean {
    if (hostHeader === undefined) return true;
    const m = HOST_HEADER.exec(hostHeader.trim());
    const host = m?.[1] ? canonicalHost(m[1]) : null;
    if (!host) return false;
    if (this.names.has(host)) return true;
    // An address added to an interface after start.
    return this.wildcard && interfaceAddresses().includes(host);
  }

  /** Answers 421 Misdirected Request, naming the setting that adds a name (not echoing `Host`). */
  refuse(res: ServerResponse): void {
    const body = `${JSON.stringify({
      error: `the Host header is not a name of this listener; ${this.o.setting} adds names`,
      reason: "host-not-allowed",
    })}\n`;
    res.writeHead(421, {
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength(body)),
      "cache-control": "no-store",
      connection: "close",
    });
    res.end(body);
  }
}

function interfaceAddresses(): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const i of list ?? []) {
      const c = canonicalHost(i.address.replace(/%.*$/, ""));
      if (c) out.push(c);
    }
  }
  return out;
}
