import { type NetworkFailureKind, networkFailure } from "../adapters/network-failure.js";

/**
 * How one check went: `ok` (2xx or 3xx in time), `status` (another answer), or why no answer
 * came: `timeout`, or the connection's failure (`refused`, `dns`, `tls`, `reset`, `unreachable`,
 * `other`).
 */
export type ProbeOutcome = "ok" | "status" | NetworkFailureKind;

/** How one HTTP check went. */
export interface ProbeResult {
  /** The URL answered 2xx or 3xx within the timeout. */
  readonly ok: boolean;
  readonly outcome: ProbeOutcome;
  /** The answer's HTTP status, when one came. */
  readonly status?: number;
  /** The outcome in words: `HTTP 503`, `timed out after 2000 ms`, `connection refused: …`. */
  readonly detail: string;
  /** Time to first byte (the response headers), when it answered at all. */
  readonly ttfbMs?: number;
  /**
   * What the probe adds to the latency window (docs/reference.md §6): the time to first byte of a
   * 2xx/3xx answer, or at least the timeout of a probe that timed out (the pool is that slow at
   * best); nothing for another answer or a connection that failed.
   */
  readonly latencyMs?: number;
  /** The URL's own `p90_ms`, when it answered JSON carrying a non-negative number there. */
  readonly reportedP90Ms?: number;
}

/** A JSON answer larger than this is not read for `p90_ms`. */
const MAX_JSON_BYTES = 64 * 1024;

async function reportedP90(res: Response): Promise<number | undefined> {
  const type = res.headers.get("content-type") ?? "";
  if (!/\bjson\b/i.test(type) || !res.ok) return undefined;
  const length = Number(res.headers.get("content-length") ?? "0");
  if (length > MAX_JSON_BYTES) return undefined;
  const text = await res.text();
  if (text.length > MAX_JSON_BYTES) return undefined;
  try {
    const doc: unknown = JSON.parse(text);
    if (typeof doc !== "object" || doc === null || !("p90_ms" in doc)) return undefined;
    const p90 = (doc as { p90_ms: unknown }).p90_ms;
    return typeof p90 === "number" && Number.isFinite(p90) && p90 >= 0 ? p90 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Probes a URL: `ok` when it answers 2xx or 3xx within the timeout, with its time to first
 * byte, and the `p90_ms` of a JSON answer (docs/reference.md §6); otherwise the status it got,
 * or whether it timed out or why its connection failed. Never throws.
 */
export function httpProbe(
  url: string,
  timeoutMs: number,
  now: () => number = performance.now.bind(performance),
): () => Promise<ProbeResult> {
  return async () => {
    const signal = AbortSignal.timeout(timeoutMs);
    const start = now();
    let res: Response;
    try {
      res = await fetch(url, { redirect: "manual", signal });
    } catch (e) {
      if (signal.aborted) {
        return {
          ok: false,
          outcome: "timeout",
          detail: `timed out after ${Math.round(timeoutMs)} ms`,
          latencyMs: Math.max(timeoutMs, now() - start),
        };
      }
      const failure = networkFailure(e);
      return { ok: false, outcome: failure.kind, detail: failure.text };
    }
    const ttfbMs = now() - start;
    const ok = res.status >= 200 && res.status < 400;
    const answer = { status: res.status, detail: `HTTP ${res.status}`, ttfbMs };
    let reportedP90Ms: number | undefined;
    try {
      reportedP90Ms = await reportedP90(res);
    } catch {
      // a body cut off by the timeout still leaves the status and the TTFB
    }
    await res.body?.cancel().catch(() => undefined);
    if (!ok) return { ok, outcome: "status", ...answer };
    return {
      ok,
      outcome: "ok",
      ...answer,
      latencyMs: ttfbMs,
      ...(reportedP90Ms !== undefined ? { reportedP90Ms } : {}),
    };
  };
}
