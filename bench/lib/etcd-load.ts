import type { Etcd3 } from "etcd3";
import type { FixtureEntry } from "./fixture.js";

// etcd's default --max-txn-ops is 128.
const TXN_OPS = 128;

/** Writes entries under `prefix` in transactions of 128 puts; resolves to the last revision. */
export async function putAll(
  client: Etcd3,
  prefix: string,
  entries: readonly FixtureEntry[],
): Promise<number> {
  let revision = 0;
  for (let i = 0; i < entries.length; i += TXN_OPS) {
    const ops = entries.slice(i, i + TXN_OPS).map((e) => ({
      request_put: { key: Buffer.from(`${prefix}${e.rel}`), value: Buffer.from(e.value) },
    }));
    const res = await client.kv.txn({ compare: [], success: ops, failure: [] });
    revision = Number(res.header.revision);
  }
  return revision;
}

/** One put; resolves to its revision. */
export async function putOne(client: Etcd3, key: string, value: string): Promise<number> {
  const res = await client.put(key).value(value).exec();
  return Number(res.header.revision);
}
