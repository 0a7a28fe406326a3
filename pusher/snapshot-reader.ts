import type { Etcd3 } from "etcd3";
import type { Snapshot } from "../core/index.js";

/**
 * Reads every key under `prefix` in one range request, so all values come from the single
 * revision in the response header: a consistent snapshot, whatever the watch delivered.
 */
export async function readPrefixSnapshot(client: Etcd3, prefix: string): Promise<Snapshot> {
  const res = await client.getAll().prefix(prefix).exec();
  return {
    revision: Number(res.header.revision),
    entries: res.kvs.map((kv) => ({ key: kv.key.toString("utf8"), value: kv.value })),
  };
}
