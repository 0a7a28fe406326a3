/** What a URL's host is, as far as a Worker's `fetch()` cares. */
export type HostKind = "name" | "loopback-ip" | "ip";

/**
 * Classifies a WHATWG URL's `hostname` (already normalized: every IPv4 spelling such as
 * `2130706433` or `0x7f.1` becomes dotted decimal, IPv6 stays bracketed and compressed). A Worker
 * cannot `fetch()` an IP-literal URL (Cloudflare error 1003), so only a DNS name reaches an origin
 * in production; loopback is told apart because the local stack and the tests run on it.
 */
export function hostKind(hostname: string): HostKind {
  if (/^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname)) {
    return hostname.startsWith("127.") ? "loopback-ip" : "ip";
  }
  if (hostname.startsWith("[")) {
    // ::1, and IPv4-mapped 127.0.0.0/8 (the URL parser writes ::ffff:127.0.0.1 as ::ffff:7f00:1)
    return hostname === "[::1]" || /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(hostname)
      ? "loopback-ip"
      : "ip";
  }
  return "name";
}
