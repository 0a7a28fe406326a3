import { canonicalHost } from "./origin-hosts.js";
import { refreshUrlRange } from "./refresh-url.js";

/** Response headers whose values carry URLs a browser follows or shows. */
const URL_HEADERS = ["location", "content-location", "link", "refresh"] as const;
/** One of the URL-bearing headers, lower case. */
export type UrlHeader = (typeof URL_HEADERS)[number];

/** Every response header `hideOriginsInHeaders` may rewrite (lower case, as `Headers` yields). */
export const ORIGIN_BEARING_HEADERS: ReadonlySet<string> = new Set([...URL_HEADERS, "set-cookie"]);

/**
 * `scheme://authority` or `//authority` anywhere in a header value; either slash may be a
 * backslash, which browsers read as a slash in http(s) URLs.
 */
const URL_AUTHORITY = /([a-z][a-z0-9+.-]*:)?[/\\]{2}([^/?#\s<>"'`,;\\]*)/gi;

/** The canonical host inside an authority (`user@host:port`, `[v6]:port`): see `canonicalHost`. */
function authorityHost(authority: string): string {
  const at = authority.lastIndexOf("@");
  const hostPort = at === -1 ? authority : authority.slice(at + 1);
  if (hostPort.startsWith("[")) {
    const close = hostPort.indexOf("]");
    return canonicalHost(close === -1 ? hostPort : hostPort.slice(0, close + 1));
  }
  const colon = hostPort.indexOf(":");
  return canonicalHost(colon === -1 ? hostPort : hostPort.slice(0, colon));
}

/** Where the visitor sent the request: `scheme:` and `host[:port]` of the public URL. */
export interface PublicOrigin {
  readonly scheme: string;
  readonly host: string;
}

/** The public origin of a request URL (as the Worker received it). */
export function publicOriginOf(url: string): PublicOrigin {
  const u = new URL(url);
  return { scheme: u.protocol, host: u.host };
}

/** Rewrites every URL in `value` whose host is an origin's to the public origin. */
export function rewriteOriginUrls(
  value: string,
  isOrigin: (host: string) => boolean,
  pub: PublicOrigin,
): string {
  return value.replace(URL_AUTHORITY, (whole, scheme: string | undefined, authority: string) => {
    if (!isOrigin(authorityHost(authority))) return whole;
    return scheme ? `${pub.scheme}//${pub.host}` : `//${pub.host}`;
  });
}

/** A `Link` target: `<` URI-reference `>` (RFC 8288). */
const LINK_TARGET = /<([^>]*)>/g;

/** Where in a header's value the URLs are that a browser reads as one: `[start, end)` each. */
function urlRanges(name: UrlHeader, value: string): (readonly [number, number])[] {
  if (name === "location" || name === "content-location") return [[0, value.length]];
  if (name === "refresh") {
    const range = refreshUrlRange(value);
    return range ? [range] : [];
  }
  return [...value.matchAll(LINK_TARGET)].map((m) => [
    m.index + 1,
    m.index + 1 + (m[1] ?? "").length,
  ]);
}

/** `ref` as the URL parser resolves it against `base`, when its host is an origin's. */
function originUrl(ref: string, base: string, isOrigin: (host: string) => boolean): URL | null {
  let url: URL;
  try {
    url = new URL(ref, base);
  } catch {
    return null;
  }
  return url.hostname !== "" && isOrigin(canonicalHost(url.hostname)) ? url : null;
}

/**
 * `value` of the header `name` with each URL a browser reads in it (all of `Location` and
 * `Content-Location`, each `Link` target, `Refresh`'s URL) that resolves to an origin replaced
 * by the public origin's URL with its path, query and fragment. Hosts are read as the WHATWG URL
 * parser reads them, relative to the public origin as the browser does: `https:///h/x`,
 * `///h/x`, `https:\\\h/x`, `/\t/h/x`, a tab inside the host and `http:h/x` (from an `https`
 * page) all lead to `h`, though no URL text is there to match.
 */
export function rewriteParsedOriginUrls(
  name: UrlHeader,
  value: string,
  isOrigin: (host: string) => boolean,
  pub: PublicOrigin,
): string {
  const base = `${pub.scheme}//${pub.host}/`;
  let out = "";
  let at = 0;
  for (const [start, end] of urlRanges(name, value)) {
    const url = originUrl(value.slice(start, end), base, isOrigin);
    if (url === null) continue;
    out += `${value.slice(at, start)}${pub.scheme}//${pub.host}${url.pathname}${url.search}${url.hash}`;
    at = end;
  }
  return out === "" ? value : out + value.slice(at);
}

/** True when a cookie `Domain` (no leading dot) covers `host` (RFC 6265 domain-match). */
function domainMatches(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

/**
 * A `Set-Cookie` line without a `Domain` attribute that names an origin host, or a parent of
 * one that the public host is not under (a browser would refuse it anyway, and it names the
 * origins' domain). `Domain=example.com` on `video.example.com` is the site's own and stays.
 */
export function dropOriginCookieDomain(
  cookie: string,
  originHosts: ReadonlySet<string>,
  publicHost: string,
): string {
  const parts = cookie.split(";");
  const kept = parts.filter((part, i) => {
    if (i === 0) return true;
    const eq = part.indexOf("=");
    if (eq === -1 || part.slice(0, eq).trim().toLowerCase() !== "domain") return true;
    const domain = canonicalHost(
      part
        .slice(eq + 1)
        .trim()
        .replace(/^\./, ""),
    );
    if (originHosts.has(domain)) return false;
    if (domainMatches(publicHost, domain)) return true;
    for (const h of originHosts) if (domainMatches(h, domain)) return false;
    return true;
  });
  return kept.length === parts.length ? cookie : kept.join(";");
}

/**
 * Every `Set-Cookie` line, unjoined. workerd has `getSetCookie` from compatibility date
 * 2023-03-01 (ours is later) and Node since 19.7; the base workers-types predate it.
 */
function setCookiesOf(headers: Headers): string[] {
  return (headers as Headers & { getSetCookie(): string[] }).getSetCookie();
}

/**
 * Hides the origins in a response's headers, in place: URL-bearing headers (`Location`,
 * `Content-Location`, `Link`, `Refresh`) that point at an origin now point at the public host
 * (every origin URL in their text, `rewriteOriginUrls`, then each URL a browser reads in them
 * as the URL parser reads it, `rewriteParsedOriginUrls`), and `Set-Cookie` loses a `Domain`
 * that names an origin. Bodies are the origin's own: see docs/edge-security.md.
 */
export function hideOriginsInHeaders(
  headers: Headers,
  originHosts: ReadonlySet<string>,
  pub: PublicOrigin,
): void {
  const isOrigin = (host: string) => originHosts.has(host);
  for (const name of URL_HEADERS) {
    const value = headers.get(name);
    if (value === null) continue;
    const next = rewriteParsedOriginUrls(
      name,
      rewriteOriginUrls(value, isOrigin, pub),
      isOrigin,
      pub,
    );
    if (next !== value) headers.set(name, next);
  }
  const cookies = setCookiesOf(headers);
  if (cookies.length === 0) return;
  const publicHost = authorityHost(pub.host);
  const next = cookies.map((c) => dropOriginCookieDomain(c, originHosts, publicHost));
  if (next.every((c, i) => c === cookies[i])) return;
  headers.delete("set-cookie");
  for (const c of next) headers.append("set-cookie", c);
}
