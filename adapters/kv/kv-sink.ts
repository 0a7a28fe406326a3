/** One key/value to write to Workers KV. */
export interface KvEntry {
  readonly key: string;
  readonly value: string;
}

/** Codes for KV sink failures. */
export type KvErrorCode =
  | "network"
  | "timeout"
  | "rate-limited"
  | "server-error"
  | "unauthorized"
  | "bad-request"
  | "unsuccessful-keys";

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

/** Whether a KV failure is worth retrying (everything but auth and malformed requests). */
export function isRetryableKvError(e: unknown): boolean {
  if (!(e instanceof KvError)) return true;
  return e.code !== "unauthorized" && e.code !== "bad-request";
}

/** Options of one `putMany`. */
export interface PutOptions {
  readonly signal?: AbortSignal;
}

/** Where the pusher writes and `edgectl status` reads: a local Miniflare namespace or Cloudflare. */
export interface KvSink {
  readonly kind: "local" | "cloudflare";
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
