/** How one attempt at an origin ended. */
export type AttemptResult =
  | { readonly kind: "response"; readonly response: Response }
  /** No response headers within the attempt's time. */
  | { readonly kind: "timeout" }
  /** A network error: refused, reset, DNS, TLS, or a URL the runtime will not fetch. */
  | { readonly kind: "unreachable" };

const TIMED_OUT = { kind: "timeout" } as const;
const UNREACHABLE = { kind: "unreachable" } as const;

/**
 * Fetches `url` and waits at most `timeoutMs` for the response headers. The clock stops once
 * the headers arrive, so a long video body is never cut off; an attempt that runs out is
 * aborted, which closes its connection (nothing is left waiting on a silent origin).
 */
export async function attemptOrigin(
  url: string,
  init: RequestInit,
  timeoutMs: number,
): Promise<AttemptResult> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), timeoutMs);
  try {
    const response = await fetch(url, { ...init, signal: controller.signal });
    return { kind: "response", response };
  } catch {
    return controller.signal.aborted ? TIMED_OUT : UNREACHABLE;
  } finally {
    clearTimeout(timer);
  }
}
