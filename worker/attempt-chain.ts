import type { ChainLink } from "../core/contract/compiled-map.js";
import type { WaitUntil } from "./map-cache.js";
import { type AttemptResult, attemptOrigin, isOriginFault } from "./origin-attempt.js";
import type { EjectionSettings, OutlierEjection } from "./outlier-ejection.js";

/** The request every attempt of a chain sends, whatever the pool. */
export interface ChainRequest {
  readonly method: string;
  /** Path and query, appended to each origin's base. */
  readonly path: string;
  /** The client's body: sent once, never with a GET or HEAD. */
  readonly body: ReadableStream | null;
  /**
   * The headers for a request of `method` to `pool`. Given at once, the same object may come
   * back each time: it is read at once, before the next call. A signed request's come later
   * (Web Crypto is asynchronous), in an object of their own.
   */
  readonly headersFor: (pool: string, method: string) => Headers | Promise<Headers>;
}

/** Limits and the isolate's state a chain works with. */
export interface ChainSettings {
  /** Origins tried in total for a GET/HEAD. */
  readonly maxAttempts: number;
  /** Per GET/HEAD attempt: milliseconds from sending it to the origin's response headers. */
  readonly originTimeoutMs: number;
  /** Per GET/HEAD: milliseconds without response headers before the next pool is asked too. */
  readonly hedgeMs: number;
  /** Any other method: milliseconds from the end of its body to the response headers. */
  readonly onceTimeoutMs: number;
  readonly ejection: OutlierEjection;
  readonly ejectionSettings: EjectionSettings;
  /** The request's context, whose `waitUntil` keeps an out-of-band probe running after the response. */
  readonly background: WaitUntil | undefined;
}

/** How a chain ended. */
export type ChainOutcome =
  /** An origin's response (the last one, a 502/503/504, when none was better). */
  | {
      readonly kind: "response";
      readonly response: Response;
      readonly link: ChainLink;
      readonly tried: readonly string[];
    }
  /** No origin answered; `allTimedOut` when every attempt sent timed out. */
  | {
      readonly kind: "no-answer";
      readonly allTimedOut: boolean;
      readonly link: ChainLink;
      readonly tried: readonly string[];
    }
  /** The request or the client failed it: no origin is to blame. */
  | {
      readonly kind: "request-refused" | "client-gone";
      readonly link: ChainLink;
      readonly tried: readonly string[];
    };

/** Gateway errors, and Cloudflare's own origin errors (520–526), move a GET/HEAD on. */
const RETRYABLE_STATUS = new Set([502, 503, 504, 520, 521, 522, 523, 524, 525, 526]);

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

/** One attempt under way. */
interface Flight {
  readonly link: ChainLink;
  readonly base: string;
  /** Its place in `tried`. */
  readonly at: number;
  readonly cancel: AbortController;
  readonly done: Promise<Landed>;
  /** Already counted against its origin (silent past the hedge). */
  charged: boolean;
}

interface Landed {
  readonly flight: Flight;
  readonly result: AttemptResult;
}

const HEDGE = Symbol("hedge");

/** Drops a response nobody will read, so its connection closes. */
function discard(response: Response): void {
  response.body?.cancel().catch(() => undefined);
}

/** `send` with the headers for `pool`, as soon as they are ready. */
function withHeaders<T>(
  req: ChainRequest,
  pool: string,
  method: string,
  send: (headers: Headers) => Promise<T>,
): Promise<T> {
  const headers = req.headersFor(pool, method);
  return headers instanceof Headers ? send(headers) : headers.then(send);
}

/**
 * Probes `base` out of band: a HEAD of the request's path, timed like a GET attempt. Any response
 * restores the origin; a timeout or refusal counts against it.
 */
function probe(link: ChainLink, base: string, req: ChainRequest, s: ChainSettings): void {
  const head = (headers: Headers) =>
    attemptOrigin(
      base + req.path,
      { method: "HEAD", headers, redirect: "manual" },
      s.originTimeoutMs,
    );
  const work = withHeaders(req, link.pool, "HEAD", head).then((r) => {
    if (r.kind === "response") discard(r.response);
    if (r.kind === "response" || isOriginFault(r.kind))
      s.ejection.record(base, r.kind !== "response", s.ejectionSettings);
    else s.ejection.release(base);
  });
  s.background?.waitUntil(work);
}

/**
 * Sends the request along `links` (the route's failover order). A GET/HEAD moves on to the next
 * pool after an origin fault or a 502/503/504/520–526, and also, when `hedgeMs` passes without
 * response headers, asks the next pool while the first still may answer: the first answer wins
 * and the others are withdrawn. Up to `maxAttempts` origins. Anything else is sent once (its
 * body cannot be replayed), timed from the end of its body. Pools the isolate passes over cost
 * no attempt (a suspect one is probed out of band); when every pool of the chain is passed over,
 * the first is tried anyway. Only origin faults count against an origin.
 */
export async function runAttemptChain(
  links: readonly ChainLink[],
  req: ChainRequest,
  s: ChainSettings,
): Promise<ChainOutcome> {
  const retryable = req.method === "GET" || req.method === "HEAD";
  const maxAttempts = retryable ? s.maxAttempts : 1;
  const es = s.ejectionSettings;
  const tried: string[] = [];
  const flights: Flight[] = [];
  let link = links[0] as ChainLink;
  let next = 0;
  let attempts = 0;
  let passedOver = 0;
  let timeouts = 0;
  let forced = false;
  let lastLaunch = 0;
  let kept: { response: Response; link: ChainLink } | null = null;

  const start = (to: ChainLink, base: string) => {
    const cancel = new AbortController();
    const send = (headers: Headers) => {
      const init: RequestInit = {
        method: req.method,
        headers,
        body: retryable ? null : req.body,
        redirect: "manual",
      };
      return retryable
        ? attemptOrigin(base + req.path, init, s.originTimeoutMs, { cancel: cancel.signal })
        : attemptOrigin(base + req.path, init, s.onceTimeoutMs, {
            clock: "after-body",
            cancel: cancel.signal,
          });
    };
    const result = withHeaders(req, to.pool, req.method, send);
    const flight: Flight = {
      link: to,
      base,
      at: tried.length - 1,
      cancel,
      charged: false,
      done: result.then((r) => ({ flight, result: r })),
    };
    flights.push(flight);
    lastLaunch = Date.now();
  };

  /** Starts the next attempt the chain allows; false when there is none. */
  const launch = (): boolean => {
    while (next < links.length && attempts < maxAttempts) {
      const to = links[next++] as ChainLink;
      const base = originBase(to.origin);
      if (base !== null) {
        const admission = s.ejection.admit(base, es);
        if (admission !== "use") {
          tried.push(to.pool);
          passedOver += 1;
          if (admission === "probe") probe(to, base, req, s);
          continue;
        }
      }
      link = to;
      tried.push(to.pool);
      attempts += 1;
      if (base === null) continue;
      start(to, base);
      return true;
    }
    if (attempts > 0 || forced || links.length === 0) return false;
    // Every pool of the chain is passed over: a route is never left with nothing.
    forced = true;
    const first = links[0] as ChainLink;
    const base = originBase(first.origin);
    link = first;
    tried.length = 0;
    tried.push(first.pool);
    passedOver = 0;
    attempts = 1;
    if (base === null) return false;
    start(first, base);
    return true;
  };

  const withdrawOthers = (winner: Flight | null) => {
    for (const f of flights) {
      if (f === winner) continue;
      f.cancel.abort();
      f.done.then(({ result }) => result.kind === "response" && discard(result.response));
    }
    flights.length = 0;
  };

  launch();
  while (flights.length > 0) {
    const canHedge = retryable && attempts < maxAttempts && next < links.length;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const hedge = canHedge
      ? new Promise<typeof HEDGE>((resolve) => {
          timer = setTimeout(() => resolve(HEDGE), lastLaunch + s.hedgeMs - Date.now());
        })
      : null;
    const landed = await Promise.race(
      hedge ? [...flights.map((f) => f.done), hedge] : flights.map((f) => f.done),
    );
    if (timer !== undefined) clearTimeout(timer);
    if (landed === HEDGE) {
      // Silent past the hedge while another pool can be asked: that counts against it.
      const silent = flights[flights.length - 1];
      if (silent && !silent.charged) {
        silent.charged = true;
        s.ejection.record(silent.base, true, es);
      }
      launch();
      continue;
    }
    const { flight, result } = landed;
    flights.splice(flights.indexOf(flight), 1);
    if (result.kind === "response") {
      s.ejection.record(flight.base, false, es);
      if (!retryable || !RETRYABLE_STATUS.has(result.response.status)) {
        withdrawOthers(flight);
        if (kept) discard(kept.response);
        return {
          kind: "response",
          response: result.response,
          link: flight.link,
          tried: tried.slice(0, flight.at + 1),
        };
      }
      if (kept) discard(kept.response);
      kept = { response: result.response, link: flight.link };
    } else if (result.kind === "request-refused" || result.kind === "client-gone") {
      withdrawOthers(null);
      if (kept) discard(kept.response);
      return { kind: result.kind, link: flight.link, tried };
    } else if (isOriginFault(result.kind)) {
      if (result.kind === "timeout") timeouts += 1;
      if (!flight.charged) s.ejection.record(flight.base, true, es);
    }
    if (flights.length === 0) launch();
  }
  if (kept) return { kind: "response", response: kept.response, link: kept.link, tried };
  const sent = tried.length - passedOver;
  return { kind: "no-answer", allTimedOut: timeouts > 0 && timeouts === sent, link, tried };
}
