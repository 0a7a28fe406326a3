import { setTimeout as sleep } from "node:timers/promises";
import type { KvSink } from "../../adapters/kv/kv-sink.js";
import { createLocalSink } from "../../adapters/kv/local-sink.js";
import type { Cleanup } from "./cleanup.js";

/** `rev` of a serialized map or `meta` without parsing it (stable JSON: `{"v":1,"rev":N,…`). */
export function revisionOf(text: string | null): number | null {
  if (text === null) return null;
  const m = /^\{"v":1,"rev":(\d+),/.exec(text);
  return m ? Number(m[1]) : null;
}

/**
 * A second Miniflare instance on the pusher's persisted namespace: what `wrangler dev` sees. A
 * read that meets the writer replacing the value's blob file fails ("internal error": the file it
 * was pointed at is gone); it is asked again, up to 3 times, 5 ms apart.
 */
export async function openKvReader(
  persistDir: string,
  namespaceId: string,
  cleanup: Cleanup,
): Promise<Pick<KvSink, "get">> {
  const sink = await createLocalSink({ persistDir, namespaceId });
  cleanup.add("kv reader", () => sink.close());
  return {
    async get(key) {
      for (let attempt = 1; ; attempt++) {
        try {
          return await sink.get(key);
        } catch (e) {
          if (attempt >= 3) throw e;
          await sleep(5);
        }
      }
    },
  };
}
