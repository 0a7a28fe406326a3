import { existsSync } from "node:fs";
import { type CompiledMap, type MapMeta, parseMap } from "../../core/index.js";
import type { CliIo } from "../cli/cli-io.js";

/** What edgectl found in Workers KV; `error` when it could not read it. */
export interface KvMaps {
  readonly routes: CompiledMap | null;
  readonly meta: MapMeta | null;
  readonly error?: string;
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

/**
 * Reads `routes` and `meta` from the KV sink the environment configures (as the pusher would).
 * Never throws: bad KV settings, a local store that does not exist (it is not created) or a sink
 * that cannot be read give `error`, with both maps null.
 */
export async function readKvMaps(io: Pick<CliIo, "env" | "cwd">): Promise<KvMaps> {
  try {
    // Loaded on demand: Miniflare and the Cloudflare SDK are heavy, and most commands need neither.
    const { createKvSink, kvSettingsFromEnv } = await import("../../adapters/kv/index.js");
    const settings = kvSettingsFromEnv(io.env, { cwd: io.cwd ?? process.cwd() });
    if (settings.kind === "local" && !existsSync(settings.persistDir)) {
      return {
        routes: null,
        meta: null,
        error: `no local KV at ${settings.persistDir} (set KV_SINK / KV_LOCAL_PERSIST as for the pusher)`,
      };
    }
    if (settings.kind === "file" && !existsSync(settings.dir)) {
      return {
        routes: null,
        meta: null,
        error: `no snapshot files at ${settings.dir} (set KV_SINK / KV_FILE_DIR as for the pusher)`,
      };
    }
    const sink = await createKvSink(settings, {});
    try {
      const [r, m] = await Promise.all([sink.get("routes"), sink.get("meta")]);
      return { routes: r === null ? null : parseMap(r), meta: parseMeta(m) };
    } finally {
      await sink.close();
    }
  } catch (e) {
    return { routes: null, meta: null, error: e instanceof Error ? e.message : String(e) };
  }
}
