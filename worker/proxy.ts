import type { ChainLink, Route } from "../core/contract/compiled-map.js";
import { type CanonicalFrame, frameWithAttrLines } from "../core/contract/edge-signature.js";
import { type ChainOutcome, type ChainSettings, runAttemptChain } from "./attempt-chain.js";
import { type AttrHeader, attrHeaders, signedAttrLines } from "./attr-headers.js";
import { EDGE_HEADERS } from "./edge-headers.js";
import { isForwardingClaim, setForwardingHeaders } from "./forwarding-headers.js";
import { signOriginRequest } from "./origin-signing.js";
import { plainResponse } from "./plain-response.js";

/**
 * What the edge tells the origin about its decision, and how the chain of attempts runs (limits,
 * hedging, the isolate's outlier ejection: docs/reference.md §4).
 */
export interface ProxyContext extends ChainSettings {
  readonly country: string;
  /** Sent as `X-Edge-Revision`; `0` when there is no map. */
  readonly rev: number;
  /** `ORIGIN_SIGNING_KEY` (then `_PREVIOUS`); empty: requests go unsigned. */
  readonly signingSecrets: readonly string[];
}

/** The result of proxying: the response to return and who produced it. */
export interface ProxyOutcome {
  /**
   * The origin's response, or the edge's own answer when no origin answered at all: 504 when
   * every attempt timed out, else 502; 400 when the request or the client failed it.
   */
  readonly response: Response;
  /** The pool whose response it is (the last one tried when none answered). */
  readonly link: ChainLink;
  /**
   * Pools tried, in order, up to the one whose response it is, with the pools passed over
   * without a request among them; more than one means request-time failover happened.
   */
  readonly tried: readonly string[];
}

/** The pools in failover order: the route's pool, then the rest of its chain. */
function failoverOrder(route: Route): ChainLink[] {
  const links: ChainLink[] = [{ pool: route.pool, origin: route.origin }];
  for (const link of route.chain) {
    if (!links.some((l) => l.pool === link.pool)) links.push(link);
  }
  return links;
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

/** The edge's own answer when no origin's response can be returned. */
function edgeAnswer(outcome: ChainOutcome): Response {
  switch (outcome.kind) {
    case "response":
      return outcome.response;
    case "no-answer":
      return outcome.allTimedOut
        ? plainResponse(504, "Gateway Timeout: no origin answered in time")
        : plainResponse(502, "Bad Gateway: no origin answered");
    case "request-refused":
      return plainResponse(400, "Bad Request: this request cannot be forwarded to an origin");
    case "client-gone":
      return plainResponse(400, "Bad Request: the request body ended before it was complete");
  }
}

/**
 * Proxies `request` to the route's origin, keeping method, path, query and headers, and the body
 * of anything but a GET or HEAD (which are sent without one), along the route's failover order
 * (`runAttemptChain`: failover, hedging, ejection). Each attempt is signed for its pool when
 * signing is on.
 */
export async function proxyToOrigins(
  request: Request,
  route: Route,
  ctx: ProxyContext,
): Promise<ProxyOutcome> {
  const method = request.method;
  const url = request.url;
  const path = pathAndQuery(url);
  const origin = originHeaders(request, url, ctx, route.attrs);
  const headers = origin.headers;
  // The request's own frame, and a probe's (a HEAD), each made once when first needed.
  let own: CanonicalFrame | null = null;
  let head: CanonicalFrame | null = null;
  const frameFor = (m: string): CanonicalFrame => {
    if (m === method) {
      own ??= signingFrame(m, path, ctx.country, origin);
      return own;
    }
    head ??= signingFrame(m, path, ctx.country, origin);
    return head;
  };
  const headersFor = (pool: string, m: string): Headers | Promise<Headers> => {
    headers.set(EDGE_HEADERS.pool, pool);
    if (ctx.signingSecrets.length === 0) return headers;
    return signOriginRequest(new Headers(headers), frameFor(m), pool, ctx.signingSecrets);
  };
  const bodyless = method === "GET" || method === "HEAD";
  const outcome = await runAttemptChain(
    failoverOrder(route),
    { method, path, body: bodyless ? null : request.body, headersFor },
    ctx,
  );
  return { response: edgeAnswer(outcome), link: outcome.link, tried: outcome.tried };
}
