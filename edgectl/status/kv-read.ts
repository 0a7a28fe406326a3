import { existsSync } from "node:fs";
import { createKvSink, kvSettingsFromEnv } from "../../adapters/kv/index.js";
import {
  type CompiledMap,
  type MapMeta,
  META_KEY,
  parseMap,
  ROUTES_KEY,
} from "../../core/index.js";
import type { CliIo } from "../cli/cli-io.js";

/** What edgectl found in Workers KV; `error` when it could not read it. */
export interface KvMaps {
  readonly routes: CompiledMap | null;
  readonly meta: MapMeta | null;
  readonly error?: string;
}

/** A KV sink opened for reading `routes` and `meta` (see {@link openKvMaps}). */
export interface KvMapsReader {
  /** Reads both maps; never throws (a failure is `error`, with both maps null). */
  read(): Promise<KvMaps>;
  /** Closes the sink (a local sink stops its Miniflare); idempotent, never throws. */
  close(): Promise<void>;
}

function parseMeta(text: string | null): MapMeta | null {
  if (text === null) return null;
  try {
    const m = JSON.parse(text) as Partial<MapMeta>;
    return typeof m.rev === "number" && typeof m.epoch === "number" ? (m as MapMeta) : null;
  } catch {
    return null;
  }
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e));

/** A reader whose every read reports `error`. */
function failed(error: string): KvMapsReader {
  return {
    read: async () => ({ routes: null, meta: null, error }),
    close: async () => {},
  };
}

/**
 * Opens the KV sink the environment configures (as the pusher would) without reading it, so a
 * caller can open it while it reads etcd and read KV after. Never throws: bad KV settings, a
 * local store that does not exist (it is not created) or a sink that cannot be opened give a
 * reader whose `read` reports `error`.
 */
export async function openKvMaps(io: Pick<CliIo, "env" | "cwd">): Promise<KvMapsReader> {
  try {
    const settings = kvSettingsFromEnv(io.env, { cwd: io.cwd ?? process.cwd() });
    if (settings.kind === "local" && !existsSync(settings.persistDir))
      return failed(
        `no local KV at ${settings.persistDir} (set KV_SINK / KV_LOCAL_PERSIST as for the pusher)`,
      );
    if (settings.kind === "file" && !existsSync(settings.dir))
      return failed(
        `no snapshot files at ${settings.dir} (set KV_SINK / KV_FILE_DIR as for the pusher)`,
      );
    const sink = await createKvSink(settings, {});
    let closing: Promise<void> | null = null;
    return {
      async read() {
        try {
          const [r, m] = await Promise.all([sink.get(ROUTES_KEY), sink.get(META_KEY)]);
          return { routes: r === null ? null : parseMap(r), meta: parseMeta(m) };
        } catch (e) {
          return { routes: null, meta: null, error: message(e) };
        }
      },
      close() {
        closing ??= sink.close().catch(() => {});
        return closing;
      },
    };
  } catch (e) {
    return failed(message(e));
  }
}

/** Reads `routes` and `meta` once ({@link openKvMaps}, read, close). Never throws. */
export async function readKvMaps(io: Pick<CliIo, "env" | "cwd">): Promise<KvMaps> {
  const reader = await openKvMaps(io);
  try {
    return await reader.read();
  } finally {
    await reader.close();
  }
}
