import type { Etcd3 } from "etcd3";
import { createLocalSink } from "../../adapters/kv/local-sink.js";
import type { Cleanup } from "./cleanup.js";
import { putOne } from "./etcd-load.js";
import { pollUntil } from "./poll-until.js";
import type { KvReader } from "./stack.js";

/** A watch and a KV put from the bench's process, each measured on its own (nothing else running). */
export interface FloorParts {
  /** etcd put → the event in another client's watch, ms. */
  watchMs(tag: string): Promise<number>;
  /** One KV put of `value` awaited, then polled by `reader` until visible, ms. */
  putMs(value: string): Promise<number>;
}

/**
 * The parts timed alone, beside the relay floor: a key watch in the bench's
 * process on `key` (outside the routing prefix), and a local sink in the bench's process whose
 * put is awaited before the reader starts polling (so the put never runs under the polling).
 */
export async function openFloorParts(o: {
  readonly client: Etcd3;
  readonly etcdEndpoint: string;
  readonly key: string;
  readonly persistDir: string;
  readonly namespaceId: string;
  readonly reader: KvReader;
  readonly pollMs: number;
  readonly cleanup: Cleanup;
}): Promise<FloorParts> {
  const { Etcd3 } = await import("etcd3");
  const watcherClient = new Etcd3({ hosts: o.etcdEndpoint });
  o.cleanup.add("floor watcher client", () => watcherClient.close());
  const watcher = await watcherClient.watch().key(o.key).create();
  o.cleanup.add("floor watcher", () => watcher.cancel());
  const writer = await createLocalSink({ persistDir: o.persistDir, namespaceId: o.namespaceId });
  o.cleanup.add("floor kv writer", () => writer.close());
  return {
    async watchMs(tag) {
      const seen = new Promise<number>((resolve) => {
        const on = (kv: { value: Buffer }) => {
          if (kv.value.toString() !== tag) return;
          watcher.off("put", on);
          resolve(performance.now());
        };
        watcher.on("put", on);
      });
      const t0 = performance.now();
      await putOne(o.client, o.key, tag);
      return (await seen) - t0;
    },
    async putMs(value) {
      const t0 = performance.now();
      await writer.putMany([{ key: "floor-probe", value }]);
      const seen = await pollUntil(
        async () => ((await o.reader.get("floor-probe")) === value ? true : null),
        { timeoutMs: 10_000, intervalMs: o.pollMs },
      );
      if (!seen) throw new Error("floor KV put never became visible");
      return performance.now() - t0;
    },
  };
}
