import type { KvSink } from "../../adapters/kv/kv-sink.js";
import { createLocalSink } from "../../adapters/kv/local-sink.js";
import type { Cleanup } from "./cleanup.js";

/** `rev` of a serialized map or `meta` without parsing it (stable JSON: `{"v":1,"rev":N,…`). */
export function revisionOf(text: string | null): number | null {
  if (text === null) return null;
  const m = /^\{"v":1,"rev":(\d+),/.exec(text);
  return m ? Number(m[1]) : null;
}

/** A second Miniflare instance on the pusher's persisted namespace: what `wrangler dev` sees. */
export async function openKvReader(
  persistDir: string,
  namespaceId: string,
  cleanup: Cleanup,
): Promise<KvSink> {
  const sink = await createLocalSink({ persistDir, namespaceId });
  cleanup.add("kv reader", () => sink.close());
  return sink;
}
