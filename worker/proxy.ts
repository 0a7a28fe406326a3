import type { ChainLink, Route } from "../core/contract/compiled-map.js";
import { type CanonicalFrame, frameWithAttrLines } from "../core/contract/edge-signature.js";
import { type AttrHeader, attrHeaders, signedAttrLines } from "./attr-headers.js";
import { EDGE_HEADERS } from "./edge-headers.js";
import { isForwardingClaim, setForwardingHeaders } from "./forwarding-headers.js";
import { attemptOrigin } from "./origin-attempt.js";
import { signOriginRequest } from "./origin-signing.js";
import type { EjectionSettings, OutlierEjection } from "./outlier-ejection.js";
import { plainResponse } from "./plain-response.js";

/** What the edge tells the origin about its decision. */
export interface ProxyContext {
  readonly country: string;
  /** Sent as `X-Edge-Revision`; `0` when there is no map. */
  readonly rev: number;
  readonly maxAttempts: number;
  /** Per GET/HEAD attempt: milliseconds from sending it to the origin's response headers. */
  readonly originTimeoutMs: number;
  /** `ORIGIN_SIGNING_KEY` (then `_PREVIOUS`); empty: requests go unsigned. */
  readonly signingSecrets: readonly string[];
  /**
   * For a request sent only once (any other method): milliseconds from the end of its body to
   * the origin's response headers. The upload itself is never timed.
   */
  readonly onceTimeoutMs: number;
  /** The isolate's outlier ejection and its settings (docs/reference.md §4). */
  readonly ejection: OutlierEjection;
  readonly ejectionSettings: EjectionSettings;
}

/** The result of proxying: the response to return and who produced it. */
export interface ProxyOutcome {
  /**
   * The origin's response, or the edge's own answer when no origin answered at all: 504 when
   * every attempt timed out, else 502.
   */
  readonly response: Response;
  /** The pool whose response it is (the last one tried when none answered). */
  readonly link: ChainLink;
  /**
   * Pools tried, in order, with the ejected pools passed over without a request among them; more
   * than one means request-time failover happened.
   */
  readonly tried: readonly string[];
}

/** Gateway errors, and Cloudflare's own origin errors (520–526), move a GET/HEAD on. */
const RETRYABLE_STATUS = new Set([502, 503, 504, 520, 521, 522, 523, 524, 525, 526]);

/** The pools in failover order: the route's pool, then the rest of its chain. */
function failoverOrder(route: Route): ChainLink[] {
  const links: ChainLink[] = [{ pool: route.pool, origin: route.origin }];
  for (const link of route.chain) {
    if (!links.some((l) => l.pool === link.pool)) links.push(link);
  }
  return links;
}

const bases = new Map<string, string | null>();

/** `scheme://host[:port]` of an http(s) origin, or `null` for anything else (memoised). */
function originBase(origin: string): string | null {
  let base = bases.get(origin);
  if (base !== undefined) return base;
  try {
    const url = new URL(origin);
    base = url.protocol === "https:" || url.protocol === "http:" ? url.origin : null;
  } catch {
    base = null;
  }
  // Origins come from a handful of pools; the bound only matters for a runaway map.
  if (bases.size >= 1024) bases.clear();
  bases.set(origin, base);
  return base;
}

/** The path and query of an absolute URL (never parsed as a URL: `//host` stays a path). */
function pathAndQuery(url: string): string {
  const start = url.indexOf("/", url.indexOf("://") + 3);
  return start === -1 ? "/" : url.slice(start);
}

/** The origin request's headers, and the values of them a signature covers. */
interface OriginHeaders {
  readonly headers: Headers;
  /** `X-Forwarded-Host`. */
  readonly host: string;
  /** `X-Edge-Revision`. */
  readonly revision: string;
  readonly attrs: readonly AttrHeader[];
}

/**
 * The origin's request headers: the client's, minus every `X-Edge-*` (case-insensitive) and
 * every forwarding claim, both found in one pass; then the edge's forwarding account, its own
 * `X-Edge-*` headers and the route's market attributes as `X-Edge-Attr-*`.
 */
function originHeaders(
  request: Request,
  url: string,
  ctx: ProxyContext,
  routeAttrs: Route["attrs"],
): OriginHeaders {
  const headers = new Headers(request.headers);
  let doomed: string[] | undefined;
  for (const name of headers.keys()) {
    if (!name.startsWith("x-edge-") && !isForwardingClaim(name)) continue;
    doomed ??= [];
    doomed.push(name);
  }
  if (doomed) for (const name of doomed) headers.delete(name);
  const host = setForwardingHeaders(headers, headers.get("CF-Connecting-IP"), url);
  const revision = String(ctx.rev);
  headers.set(EDGE_HEADERS.country, ctx.country);
  headers.set(EDGE_HEADERS.revision, revision);
  headers.set(EDGE_HEADERS.hop, "1");
  const attrs = attrHeaders(routeAttrs);
  for (const a of attrs) headers.set(a.name, a.value);
  return { headers, host, revision, attrs };
}

/** What every signature of this request covers but `t` and the pool: what its headers say. */
function signingFrame(
  method: string,
  path: string,
  country: string,
  o: OriginHeaders,
): CanonicalFrame {
  return frameWithAttrLines(
    { method, host: o.host, pathAndQuery: path, country, revision: o.revision },
    signedAttrLines(o.attrs),
  );
}

function edgeError(allTimedOut: boolean): Response {
  return allTimedOut
    ? plainResponse(504, "Gateway Timeout: no origin answered in time")
    : plainResponse(502, "Bad Gateway: no origin answered");
}

/**
 * Proxies `request` to the route's origin, keeping method, path, query, headers and body.
 * GET/HEAD move on to the next pool of the chain after a network error, no response headers
 * within `originTimeoutMs`, or a 502/503/504/520–526, up to `maxAttempts` origins. Anything
 * else is sent once (its body cannot be replayed) and timed by `onceTimeoutMs` from the end of
 * its body: cutting an upload, or an answer the origin may be committing, buys no failover.
 * Pools the isolate has ejected are passed over without a request and cost no attempt; when
 * every pool of the chain is ejected, the first is tried anyway. Each attempt is signed for its
 * pool when signing is on.
 */
export async function proxyToOrigins(
  request: Request,
  route: Route,
  ctx: ProxyContext,
): Promise<ProxyOutcome> {
  const method = request.method;
  const url = request.url;
  const retryable = method === "GET" || method === "HEAD";
  const maxAttempts = retryable ? ctx.maxAttempts : 1;
  const links = failoverOrder(route);
  const path = pathAndQuery(url);
  const origin = originHeaders(request, url, ctx, route.attrs);
  const headers = origin.headers;
  const signed =
    ctx.signingSecrets.length > 0 ? signingFrame(method, path, ctx.country, origin) : null;
  const tried: string[] = [];
  let last: { response: Response; link: ChainLink } | null = null;
  let link = links[0] ?? { pool: route.pool, origin: route.origin };
  let timeouts = 0;
  let attempts = 0;
  let passedOver = 0;

  const attempt = async (next: ChainLink, base: string): Promise<boolean> => {
    attempts += 1;
    headers.set(EDGE_HEADERS.pool, next.pool);
    if (signed) signOriginRequest(headers, signed, next.pool, ctx.signingSecrets);
    const init: RequestInit = { method, headers, body: request.body, redirect: "manual" };
    const result = retryable
      ? await attemptOrigin(base + path, init, ctx.originTimeoutMs)
      : await attemptOrigin(base + path, init, ctx.onceTimeoutMs, "after-body");
    ctx.ejection.record(base, result.kind !== "response", ctx.ejectionSettings);
    if (result.kind === "timeout") timeouts += 1;
    if (result.kind !== "response") return false;
    if (last) last.response.body?.cancel().catch(() => undefined);
    last = { response: result.response, link: next };
    return !RETRYABLE_STATUS.has(result.response.status);
  };

  for (const next of links) {
    if (attempts >= maxAttempts) break;
    const base = originBase(next.origin);
    if (base !== null && ctx.ejection.admit(base, ctx.ejectionSettings) === "skip") {
      tried.push(next.pool);
      passedOver += 1;
      continue;
    }
    link = next;
    tried.push(next.pool);
    if (base === null) {
      attempts += 1;
      continue;
    }
    if (await attempt(next, base)) break;
  }
  if (attempts === 0 && links[0]) {
    // Every pool of the chain is ejected: a route is never left with nothing.
    const first = links[0];
    const base = originBase(first.origin);
    link = first;
    tried.length = 0;
    tried.push(first.pool);
    passedOver = 0;
    if (base !== null) await attempt(first, base);
  }
  const answered = last as { response: Response; link: ChainLink } | null;
  if (answered) return { response: answered.response, link: answered.link, tried };
  return {
    response: edgeError(timeouts > 0 && timeouts === tried.length - passedOver),
    link,
    tried,
  };
}
