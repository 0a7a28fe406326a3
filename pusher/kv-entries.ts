import type { KvEntry, KvSink } from "../adapters/kv/kv-sink.js";
import {
  boundProblemLines,
  type CompiledMap,
  META_KEY,
  ROUTES_KEY,
  serializeMap,
  serializeMeta,
} from "../core/index.js";

/**
 * The entries of one push: `routes` (when its routing changed) and always `meta`, describing
 * `metaSource` (the newest compile `routes` routes as), stamped by the writer.
 */
export function pushEntries(
  routes: CompiledMap | null,
  metaSource: CompiledMap,
  pusherId: string,
  at: number,
): KvEntry[] {
  const entries: KvEntry[] = [];
  if (routes) entries.push({ key: ROUTES_KEY, value: serializeMap(routes) });
  entries.push({
    key: META_KEY,
    value: serializeMeta({
      v: 1,
      rev: metaSource.rev,
      epoch: metaSource.epoch,
      heartbeat_at: new Date(at).toISOString(),
      pusher: pusherId,
      countries: Object.keys(metaSource.countries).length,
      problems: boundProblemLines(metaSource.problems),
    }),
  });
  return entries;
}

/**
 * Writes with fencing: a write still in flight when the leadership window closes (`deadlineMs`
 * from now) is aborted, so it cannot land after a standby took over.
 */
export async function fencedPut(
  kv: KvSink,
  entries: readonly KvEntry[],
  deadlineMs: number,
): Promise<void> {
  const fence = new AbortController();
  const timer = setTimeout(() => fence.abort(), Math.max(0, deadlineMs));
  try {
    await kv.putMany(entries, { signal: fence.signal });
  } finally {
    clearTimeout(timer);
  }
}
