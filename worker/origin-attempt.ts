/** How one attempt at an origin ended. */
export type AttemptResult =
  | { readonly kind: "response"; readonly response: Response }
  /** No response headers within the attempt's time. */
  | { readonly kind: "timeout" }
  /** A network error: refused, reset, DNS, TLS, or a URL the runtime will not fetch. */
  | { readonly kind: "unreachable" };

/** When an attempt's clock starts. */
export type AttemptClock =
  /** When the request is sent: a GET/HEAD, which has no body and may move on to another pool. */
  | "at-send"
  /**
   * When the request body has been sent in full (at once without one): a request sent only
   * once, whose upload may take as long as the client needs.
   */
  | "after-body";

const TIMED_OUT = { kind: "timeout" } as const;
const UNREACHABLE = { kind: "unreachable" } as const;

/** A `Content-Length` the body will be sent with, or `null` (then it is sent chunked). */
function declaredLength(headers: HeadersInit | undefined): number | null {
  const raw = headers instanceof Headers ? headers.get("content-length") : null;
  if (raw === null || !/^\d{1,15}$/.test(raw)) return null;
  return Number(raw);
}

/**
 * The body as the origin gets it, and a promise settled once the whole of it has been handed to
 * the connection. The length the client declared is kept (a `FixedLengthStream`), so an upload
 * reaches the origin with its `Content-Length`, exactly as an untouched body would.
 */
function watchedBody(
  body: ReadableStream,
  length: number | null,
): { body: ReadableStream; sent: Promise<void> } {
  const pipe = length === null ? new IdentityTransformStream() : new FixedLengthStream(length);
  return { body: pipe.readable, sent: body.pipeTo(pipe.writable) };
}

/**
 * Fetches `url` and waits at most `timeoutMs` for the response headers, counted from `clock`.
 * The clock stops once the headers arrive, so a long video body is never cut off; an attempt
 * that runs out is aborted, which closes its connection (nothing is left waiting on a silent
 * origin). With `after-body`, nothing is timed while the body streams: an upload that stalls
 * waits for the client (or the platform's own limits), never for this clock.
 */
export async function attemptOrigin(
  url: string,
  init: RequestInit,
  timeoutMs: number,
  clock: AttemptClock = "at-send",
): Promise<AttemptResult> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | null = null;
  let done = false;
  const start = () => {
    if (!done) timer = setTimeout(() => controller.abort(), timeoutMs);
  };
  let sendInit = init;
  if (clock === "after-body" && init.body instanceof ReadableStream) {
    const watched = watchedBody(init.body, declaredLength(init.headers));
    sendInit = { ...init, body: watched.body };
    // A client that gives up mid-upload fails the fetch itself; nothing to time then.
    watched.sent.then(start, () => undefined);
  } else start();
  try {
    const response = await fetch(url, { ...sendInit, signal: controller.signal });
    return { kind: "response", response };
  } catch {
    return controller.signal.aborted ? TIMED_OUT : UNREACHABLE;
  } finally {
    done = true;
    if (timer !== null) clearTimeout(timer);
  }
}
