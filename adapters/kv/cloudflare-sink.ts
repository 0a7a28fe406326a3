import { NotFoundError } from "cloudflare/error";
import { Namespaces } from "cloudflare/resources/kv/namespaces/namespaces";
import { createClient } from "cloudflare/tree-shakable";
import type { Logger } from "pino";
import { chunkEntries } from "./bulk-chunks.js";
import { envelopeErrors, toKvError } from "./cloudflare-errors.js";
import { type KvEntry, KvError, type KvSink, type PutOptions } from "./kv-sink.js";
import { CLOUDFLARE_BUDGET, RequestBudget } from "./request-budget.js";
import type { Secret } from "./secret.js";

/** Cloudflare's v4 API base, used when `CF_API_BASE_URL` is unset. */
export const DEFAULT_CF_API_BASE_URL = "https://api.cloudflare.com/client/v4";

/** How the Cloudflare sink reaches the Workers KV REST API. */
export interface CloudflareSinkOptions {
  readonly accountId: string;
  readonly namespaceId: string;
  readonly apiToken: Secret;
  /** API base, e.g. a local stand-in; default Cloudflare's `https://api.cloudflare.com/client/v4`. */
  readonly baseUrl?: string;
  /** Per-request deadline (default 10 s). */
  readonly timeoutMs?: number;
  /** This process's share of the account budget (default: `CLOUDFLARE_BUDGET`, 900 per 5 minutes). */
  readonly budget?: RequestBudget;
  readonly logger?: Logger;
  readonly now?: () => number;
}

/**
 * Only the API's envelope with `10009 key not found` is an absent key. Another 404 (unknown
 * namespace 10013) is an error, and so is a 404 without the envelope: a proxy's or another
 * server's page says nothing about the key.
 */
function isKeyNotFound(e: unknown): boolean {
  if (!(e instanceof NotFoundError)) return false;
  const errors = envelopeErrors(e);
  return errors !== null && errors.length > 0 && errors.every((x) => x.code === 10009);
}

/**
 * A KvSink over the documented Workers KV REST API, via the official `cloudflare` SDK: its
 * tree-shakable client with only the KV namespaces resource (the build bundles just that part,
 * instead of loading the SDK's hundreds of resources).
 */
export function createCloudflareSink(opts: CloudflareSinkOptions): KvSink {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const now = opts.now ?? Date.now;
  const budget = opts.budget ?? new RequestBudget(CLOUDFLARE_BUDGET);
  const log = opts.logger;
  const client = createClient({
    resources: [Namespaces],
    apiToken: opts.apiToken.reveal(),
    // Explicit values stop the SDK reading CLOUDFLARE_API_KEY/EMAIL/BASE_URL from the environment.
    apiKey: null,
    apiEmail: null,
    userServiceKey: null,
    baseURL: opts.baseUrl ?? DEFAULT_CF_API_BASE_URL,
    maxRetries: 0, // the pusher owns retries (backoff, Retry-After, superseding)
    timeout: timeoutMs,
    logLevel: "off", // SDK debug logs would include request details
  });
  const ids = { account_id: opts.accountId, namespace_id: opts.namespaceId };

  // One deadline over the whole exchange: the SDK's timeout stops at the response headers.
  async function call<T>(
    op: string,
    run: (signal: AbortSignal) => Promise<T>,
    outer?: AbortSignal,
  ): Promise<T> {
    if (outer?.aborted) throw new KvError("timeout", `${op}: write deadline passed`);
    await budget.acquire();
    const started = now();
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = outer ? AbortSignal.any([timeout, outer]) : timeout;
    try {
      const out = await run(signal);
      log?.debug({ op, ms: now() - started }, "kv request done");
      return out;
    } catch (e) {
      const err = signal.aborted
        ? new KvError("timeout", `${op}: request timed out`)
        : toKvError(e, op, opts.apiToken, now());
      log?.warn({ op, ms: now() - started, code: err.code, err: err.message }, "kv request failed");
      throw err;
    }
  }

  return {
    kind: "cloudflare",
    async get(key: string): Promise<string | null> {
      return call("get", async (signal) => {
        try {
          const res = await client.kv.namespaces.values.get(key, ids, { signal });
          return await res.text();
        } catch (e) {
          if (isKeyNotFound(e)) return null;
          throw e;
        }
      });
    },
    async putMany(entries: readonly KvEntry[], options: PutOptions = {}): Promise<void> {
      for (const chunk of chunkEntries(entries)) {
        const result = await call(
          "bulk write",
          (signal) =>
            client.kv.namespaces.bulkUpdate(
              opts.namespaceId,
              { account_id: opts.accountId, body: chunk.map(({ key, value }) => ({ key, value })) },
              { signal },
            ),
          options.signal,
        );
        const failed = result?.unsuccessful_keys ?? [];
        if (failed.length > 0) {
          log?.warn({ op: "bulk write", unsuccessful_keys: failed }, "kv bulk write partly failed");
          throw new KvError(
            "unsuccessful-keys",
            `bulk write: ${failed.length} key(s) not written: ${failed.join(", ")}`,
            undefined,
            failed,
          );
        }
      }
    },
    async close(): Promise<void> {},
  };
}
