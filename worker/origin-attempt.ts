/** How one attempt at an origin ended. */
export type AttemptResult =
  | { readonly kind: "response"; readonly response: Response }
  /** No response headers within the attempt's time: the origin's fault. */
  | { readonly kind: "timeout" }
  /** A network error: refused, reset, DNS, TLS. The origin's fault. */
  | { readonly kind: "unreachable" }
  /** The runtime would not build the request from what the client sent; nothing was sent. */
  | { readonly kind: "request-refused" }
  /** The client's body failed before it was sent in full (an upload cut off by the client). */
  | { readonly kind: "client-gone" }
  /** The edge withdrew the attempt: another pool answered first. */
  | { readonly kind: "cancelled" };

/** The ways an attempt can end. */
export type AttemptKind = AttemptResult["kind"];

/** True for the outcomes that are the origin's fault (docs/reference.md §4, "what counts"). */
export function isOriginFault(kind: AttemptKind): boolean {
  return kind === "timeout" || kind === "unreachable";
}

/** When an attempt's clock starts. */
export type AttemptClock =
  /** When the request is sent: a GET/HEAD, which has no body and may move on to another pool. */
  | "at-send"
  /**
   * When the request body has been sent in full (at once without one): a request sent only
   * once, whose upload may take as long as the client needs.
   */
  | "after-body";

/** The attempt's clock and who may withdraw it. */
export interface AttemptOptions {
  readonly clock?: AttemptClock;
  /** Aborting it withdraws the attempt (`cancelled`): its connection is closed. */
  readonly cancel?: AbortSignal;
}

const TIMED_OUT = { kind: "timeout" } as const;
const UNREACHABLE = { kind: "unreachable" } as const;
const REQUEST_REFUSED = { kind: "request-refused" } as const;
const CLIENT_GONE = { kind: "client-gone" } as const;
const CANCELLED = { kind: "cancelled" } as const;

/** A `Content-Length` the body will be sent with, or `null` (then it is sent chunked). */
function declaredLength(headers: HeadersInit | undefined): number | null {
  const raw = headers instanceof Headers ? headers.get("content-length") : null;
  if (raw === null || !/^\d{1,15}$/.test(raw)) return null;
  return Number(raw);
}

/** How handing the client's body to the origin's connection ended. */
type PumpEnd = "sent" | "client-gone" | "origin-gone";

/**
 * Copies the client's body into `sink` chunk by chunk, telling apart a client whose body fails
 * (`client-gone`, recorded in `state` the moment it happens, before the origin's side can fail
 * because of it) from an origin connection that stops taking it.
 */
async function pump(
  source: ReadableStream<Uint8Array>,
  sink: WritableStream<Uint8Array>,
  state: { clientGone: boolean },
): Promise<PumpEnd> {
  const reader = source.getReader();
  const writer = sink.getWriter();
  for (;;) {
    let chunk: ReadableStreamReadResult<Uint8Array>;
    try {
      chunk = await reader.read();
    } catch (err) {
      state.clientGone = true;
      writer.abort(err).catch(() => undefined);
      return "client-gone";
    }
    if (chunk.done) break;
    try {
      await writer.write(chunk.value);
    } catch (err) {
      reader.cancel(err).catch(() => undefined);
      return "origin-gone";
    }
  }
  try {
    await writer.close();
    return "sent";
  } catch {
    // A declared length the body fell short of: the client's body ended early.
    state.clientGone = true;
    return "client-gone";
  }
}

/**
 * Fetches `url` and waits at most `timeoutMs` for the response headers, counted from the clock.
 * The clock stops once the headers arrive, so a long video body is never cut off; an attempt
 * that runs out is aborted, which closes its connection (nothing is left waiting on a silent
 * origin). With `after-body`, nothing is timed while the body streams: an upload that stalls
 * waits for the client (or the platform's own limits), never for this clock.
 *
 * The result says whose fault a failure is: a request the runtime will not build
 * (`request-refused`) and a client whose body fails (`client-gone`) are never the origin's. A
 * body keeps the length the client declared (a `FixedLengthStream`), so an upload reaches the
 * origin with its `Content-Length`, exactly as an untouched body would.
 */
export async function attemptOrigin(
  url: string,
  init: RequestInit,
  timeoutMs: number,
  opts: AttemptOptions = {},
): Promise<AttemptResult> {
  const controller = new AbortController();
  const client = { clientGone: false };
  let source: ReadableStream<Uint8Array> | null = null;
  let pipe: { readable: ReadableStream; writable: WritableStream } | null = null;
  let sendInit: RequestInit = init;
  if (init.body instanceof ReadableStream) {
    source = init.body;
    const length = declaredLength(init.headers);
    pipe = length === null ? new IdentityTransformStream() : new FixedLengthStream(length);
    sendInit = { ...init, body: pipe.readable };
  }
  let request: Request;
  try {
    request = new Request(url, { ...sendInit, signal: controller.signal });
  } catch {
    return REQUEST_REFUSED;
  }

  let timer: ReturnType<typeof setTimeout> | null = null;
  let done = false;
  const start = () => {
    if (!done) timer = setTimeout(() => controller.abort(), timeoutMs);
  };
  let cancelled = false;
  const withdraw = () => {
    cancelled = true;
    controller.abort();
  };
  const cancel = opts.cancel;
  if (cancel?.aborted) return CANCELLED;
  cancel?.addEventListener("abort", withdraw);
  if (source && pipe) {
    const sent = pump(source, pipe.writable, client);
    if (opts.clock === "after-body") sent.then((end) => end === "sent" && start());
    else start();
  } else start();
  try {
    const response = await fetch(request);
    return { kind: "response", response };
  } catch {
    if (cancelled) return CANCELLED;
    if (client.clientGone) return CLIENT_GONE;
    return controller.signal.aborted ? TIMED_OUT : UNREACHABLE;
  } finally {
    done = true;
    if (timer !== null) clearTimeout(timer);
    cancel?.removeEventListener("abort", withdraw);
  }
}
