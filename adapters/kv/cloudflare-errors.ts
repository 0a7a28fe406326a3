import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from "cloudflare/error";
import { KvError, type KvErrorCode } from "./kv-sink.js";
import { parseRetryAfter } from "./retry-after.js";
import type { Secret } from "./secret.js";

/** Replaces every occurrence of the token (and its Bearer header form) in a text. */
export function redact(text: string, token: Secret): string {
  const raw = token.reveal();
  return raw.length > 0 ? text.split(raw).join("[redacted]") : text;
}

function codeForStatus(status: number): KvErrorCode {
  if (status === 429) return "rate-limited";
  if (status === 401 || status === 403) return "unauthorized";
  if (status === 408) return "timeout";
  if (status >= 500) return "server-error";
  return "bad-request";
}

/** `errors: [{code, message}]` of the v4 envelope, as one short line. */
function describeEnvelope(e: APIError): string {
  const parts = e.errors
    .map((x) => `${x.code ?? "?"} ${typeof x.message === "string" ? x.message : ""}`.trim())
    .filter(Boolean);
  return parts.length > 0 ? parts.join("; ") : "no error details";
}

/**
 * Maps an SDK failure to a KvError. Messages are built here from status and envelope codes (the
 * SDK's own message is the raw body, which could echo request data) and redacted of the token.
 */
export function toKvError(e: unknown, op: string, token: Secret, now: number): KvError {
  if (e instanceof KvError) return e;
  if (e instanceof APIConnectionTimeoutError || e instanceof APIUserAbortError) {
    return new KvError("timeout", `${op}: request timed out`);
  }
  if (e instanceof APIConnectionError) {
    const cause = e.cause instanceof Error ? `: ${e.cause.message}` : "";
    return new KvError("network", redact(`${op}: connection failed${cause}`, token));
  }
  if (e instanceof APIError && typeof e.status === "number") {
    const code = codeForStatus(e.status);
    const message = redact(`${op}: HTTP ${e.status} (${describeEnvelope(e)})`, token);
    const retryAfterMs =
      e.headers instanceof Headers ? parseRetryAfter(e.headers.get("retry-after"), now) : undefined;
    return new KvError(code, message, retryAfterMs);
  }
  const detail = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  return new KvError("network", redact(`${op}: ${detail}`, token));
}
