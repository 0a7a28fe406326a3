import { setTimeout as pause } from "node:timers/promises";
import type { Logger } from "pino";
import { ConfigError } from "../errors.js";
import { localPersistRoot, ROUTING_BINDING } from "./kv-settings.js";
import { type KvEntry, KvError, type KvSink, type PutOptions } from "./kv-sink.js";

/** What the local sink needs: the `wrangler dev --persist-to` directory and the namespace id. */
export interface LocalSinkOptions {
  readonly persistDir: string;
  readonly namespaceId: string;
  readonly logger?: Logger;
  /** Pause between the puts of one `putMany` (default {@link LOCAL_PUT_GAP_MS}). */
  readonly putGapMs?: number;
}

/**
 * Between two puts of one `putMany`, a pause long enough for a reader in another process to read
 * the first. Miniflare's namespace (workerd's SQLite) holds off readers in other processes, such
 * as the Worker under `wrangler dev`, while a put is in progress, and one read of a map-sized
 * value takes a few ms: with `meta` put 10 ms after `routes`, a reader polling every 2 ms saw
 * `routes` 12.5 ms after its put ended (p50), against 7.1 for a lone put; 40 ms apart, 6.0.
 * Cloudflare's bulk write has no such order; locally,
 * each entry is readable as soon as it lands.
 */
export const LOCAL_PUT_GAP_MS = 40;

/**
 * The Miniflare the local sink runs, the one wrangler ships (package.json devDependencies; a
 * test keeps the two equal). A production install has no miniflare: it uses `KV_SINK=cloudflare`.
 */
export const MINIFLARE_PACKAGE = "miniflare@5.20261117.0-beta";

// The same no-op script `wrangler kv key put --local` runs its Miniflare with.
const SCRIPT =
  'addEventListener("fetch", (e) => e.respondWith(new Response(null, { status: 404 })))';

function wrap(op: string, e: unknown): KvError {
  if (e instanceof KvError) return e;
  const detail = e instanceof Error ? e.message : String(e);
  return new KvError("server-error", `local KV ${op} failed: ${detail}`);
}

const signalOf = (o: PutOptions) => (o.signal ? { signal: o.signal } : {});

type MiniflareModule = typeof import("miniflare");

/** Loads miniflare only now: it (and its ~120 MB workerd) is a development dependency. */
async function loadMiniflare(): Promise<MiniflareModule> {
  try {
    return await import("miniflare");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") throw e;
    throw new ConfigError(
      "missing-dependency",
      "KV_SINK",
      `"local" needs the miniflare package, which is not installed (a production install ` +
        `leaves it out): install it beside edge-router with \`npm install ${MINIFLARE_PACKAGE}\`, ` +
        `or use KV_SINK=cloudflare`,
    );
  }
}

/**
 * Starts a Miniflare KV namespace persisted where `wrangler dev` reads it. Throws ConfigError
 * `missing-dependency` when miniflare is not installed.
 */
export async function createLocalSink(opts: LocalSinkOptions): Promise<KvSink> {
  const { Miniflare, convertV4MiniflareOptions } = await loadMiniflare();
  const mf = new Miniflare(
    convertV4MiniflareOptions({
      script: SCRIPT,
      resourcePersistencePath: localPersistRoot(opts.persistDir),
      kvNamespaces: { [ROUTING_BINDING]: opts.namespaceId },
    }),
  );
  let closed = false;
  const gapMs = opts.putGapMs ?? LOCAL_PUT_GAP_MS;
  try {
    const ns = await mf.getKVNamespace(ROUTING_BINDING);
    opts.logger?.info(
      { persistDir: opts.persistDir, namespaceId: opts.namespaceId },
      "local KV sink ready",
    );
    return {
      kind: "local",
      async get(key: string): Promise<string | null> {
        try {
          return await ns.get(key, "text");
        } catch (e) {
          throw wrap("get", e);
        }
      },
      async putMany(entries: readonly KvEntry[], options: PutOptions = {}): Promise<void> {
        try {
          for (const [i, { key, value }] of entries.entries()) {
            if (i > 0 && gapMs > 0) await pause(gapMs, undefined, signalOf(options));
            if (options.signal?.aborted) throw new KvError("timeout", "write deadline passed");
            await ns.put(key, value);
          }
        } catch (e) {
          // The deadline passed during a pause: what `signal` means.
          if (e instanceof Error && e.name === "AbortError")
            throw new KvError("timeout", "write deadline passed");
          throw wrap("put", e);
        }
      },
      async close(): Promise<void> {
        if (closed) return;
        closed = true;
        await mf.dispose();
      },
    };
  } catch (e) {
    await mf.dispose().catch(() => {});
    throw wrap("start", e);
  }
}
