import {
  APIConnectionError,
  APIConnectionTimeoutError,
  APIError,
  APIUserAbortError,
} from "cloudflare/error";
import { networkFailure } from "../network-failure.js";
import { KvError, type KvErrorCode } from "./kv-sink.js";
import { parseRetryAfter } from "./retry-after.js";
import type { Secret } from "./secret.js";

/** Replaces every occurrence of the token (and its Bearer header form) in a text. */
export function redact(text: string, token: Secret): string {
  const raw = token.reveal();
  return raw.length > 0 ? text.split(raw).join("[redacted]") : text;
}

/** One entry of the v4 envelope's `errors`, with the nested `error_chain` 6003 carries. */
interface EnvelopeError {
  readonly code?: unknown;
  readonly message?: unknown;
  readonly error_chain?: unknown;
}

/**
 * The `errors` of the API's v4 envelope (`{success, errors, messages, result}`), or null when the
 * body was not that envelope (an HTML page, another server's JSON, no body).
 */
export function envelopeErrors(e: APIError): readonly EnvelopeError[] | null {
  const body: unknown = e.error;
  if (typeof body !== "object" || body === null) return null;
  const { success, errors } = body as { success?: unknown; errors?: unknown };
  if (typeof success !== "boolean" || !Array.isArray(errors)) return null;
  return errors.filter((x): x is EnvelopeError => typeof x === "object" && x !== null);
}

/** The codes of the errors and their chains, outermost first. */
function codesOf(errors: readonly EnvelopeError[]): number[] {
  const out: number[] = [];
  for (const x of errors) {
    if (typeof x.code === "number") out.push(x.code);
    if (Array.isArray(x.error_chain)) out.push(...codesOf(x.error_chain as EnvelopeError[]));
  }
  return out;
}

/** `errors` as one short line, e.g. `6003 Invalid request headers (6111 Invalid format …)`. */
function describe(errors: readonly EnvelopeError[]): string {
  const parts = errors.map((x) => {
    const head = `${typeof x.code === "number" ? x.code : "?"} ${typeof x.message === "string" ? x.message : ""}`;
    const chain = Array.isArray(x.error_chain) ? describe(x.error_chain as EnvelopeError[]) : "";
    return (chain ? `${head.trim()} (${chain})` : head).trim();
  });
  return parts.filter(Boolean).join("; ") || "no error details";
}

function codeForEnvelope(status: number, codes: readonly number[]): KvErrorCode {
  if (codes.includes(9106)) return "credentials-missing";
  if (codes.includes(6003) || codes.includes(6111)) return "credentials-malformed";
  if (codes.includes(10000) || status === 401 || status === 403) return "unauthorized";
  if (status === 429) return "rate-limited";
  if (status === 408) return "timeout";
  if (status >= 500) return "server-error";
  return "bad-request";
}

/** The `<title>` of an HTML page, printable ASCII only and short (it is remote text). */
function pageTitle(text: string): string | null {
  const m = /<title>([^<]{1,200})<\/title>/i.exec(text);
  const title = m?.[1]?.replace(/[^\x20-\x7e]/g, "").trim();
  return title ? title.slice(0, 80) : null;
}

/** A status whose body is not the API's envelope: the edge, a proxy or the wrong server. */
function foreignAnswer(e: APIError, status: number, op: string): [KvErrorCode, string] {
  const title = pageTitle(e.message);
  const kind = e.headers?.get("content-type")?.split(";")[0]?.trim() || "no content type";
  const what = title ? `${kind} "${title}"` : kind;
  if (status === 429) return ["rate-limited", `${op}: HTTP 429 (${what})`];
  if (status >= 500) {
    return ["edge-error", `${op}: HTTP ${status} from Cloudflare's edge, not the API (${what})`];
  }
  return [
    "unexpected-response",
    `${op}: HTTP ${status} that is not a Cloudflare API answer (${what}); check CF_API_BASE_URL`,
  ];
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
    const failure = networkFailure(e.cause ?? e);
    const what = failure.kind === "other" ? `connection failed: ${failure.text}` : failure.text;
    return new KvError("network", redact(`${op}: ${what}`, token));
  }
  if (e instanceof APIError && typeof e.status === "number") {
    const errors = envelopeErrors(e);
    const [code, message] = errors
      ? [
          codeForEnvelope(e.status, codesOf(errors)),
          `${op}: HTTP ${e.status} (${describe(errors)})`,
        ]
      : foreignAnswer(e, e.status, op);
    const retryAfterMs =
      e.headers instanceof Headers ? parseRetryAfter(e.headers.get("retry-after"), now) : undefined;
    return new KvError(code, redact(message, token), retryAfterMs);
  }
  const detail = e instanceof Error ? `${e.name}: ${networkFailure(e).text}` : String(e);
  return new KvError("network", redact(`${op}: ${detail}`, token));
}
