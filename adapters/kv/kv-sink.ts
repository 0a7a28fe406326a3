/** One key/value to write to Workers KV. */
export interface KvEntry {
  readonly key: string;
  readonly value: string;
}

/**
 * Codes for KV sink failures. `server-error` is a 5xx in the API's own envelope, `edge-error` a
 * 5xx HTML page from Cloudflare's edge in front of it; `unexpected-response` is an answer that is
 * not the API's envelope at all (a proxy's page, a wrong `CF_API_BASE_URL`). The credential codes
 * follow the API's: `credentials-missing` (9106), `credentials-malformed` (6003/6111: the header
 * is not `Bearer <token>`), `unauthorized` (10000, or 401/403: the token is refused).
 */
export type KvErrorCode =
  | "network"
  | "timeout"
  | "rate-limited"
  | "server-error"
  | "edge-error"
  | "unexpected-response"
  | "credentials-missing"
  | "credentials-malformed"
  | "unauthorized"
  | "bad-request"
  | "unsuccessful-keys"
  /** The file sink could not read or write a file (disk full, permissions): retried. */
  | "file-error";

const NOT_RETRYABLE: ReadonlySet<KvErrorCode> = new Set([
  "unauthorized",
  "credentials-missing",
  "credentials-malformed",
  "bad-request",
  "unexpected-response",
]);

/** A failed KV operation. `retryAfterMs` is set from a `Retry-After` header when present. */
export class KvError extends Error {
  override readonly name = "KvError";
  constructor(
    readonly code: KvErrorCode,
    message: string,
    readonly retryAfterMs?: number,
    readonly unsuccessfulKeys: readonly string[] = [],
  ) {
    super(message);
  }
}

/**
 * Whether a KV failure is worth retrying: everything but refused or malformed credentials,
 * malformed requests, and answers from something that is not the API.
 */
export function isRetryableKvError(e: unknown): boolean {
  if (!(e instanceof KvError)) return true;
  return !NOT_RETRYABLE.has(e.code);
}

/** Options of one `putMany`. */
export interface PutOptions {
  readonly signal?: AbortSignal;
}

/**
 * Where the pusher writes and `edgectl status` reads: a local Miniflare namespace, Cloudflare,
 * or KV as files.
 */
export interface KvSink {
  readonly kind: "local" | "cloudflare" | "file";
  /** Reads a key; `null` when absent. */
  get(key: string): Promise<string | null>;
  /**
   * Writes all entries in one request (a bulk write for Cloudflare). Throws KvError. An aborted
   * `signal` (the writer's leadership deadline) stops the write with a `timeout` KvError.
   */
  putMany(entries: readonly KvEntry[], options?: PutOptions): Promise<void>;
  /** Releases resources (the Miniflare instance, sockets). */
  close(): Promise<void>;
}
