import type { Etcd3 } from "etcd3";
import type { FixtureEntry } from "./fixture.js";

// etcd's default --max-txn-ops is 128.
const TXN_OPS = 128;
/** Transactions in flight: 100,000 keys load in a few seconds, not one round trip per 128. */
const IN_FLIGHT = 16;

/**
 * Writes entries under `prefix` in transactions of 128 puts, 16 in flight (the keys are
 * distinct, so their order does not matter); resolves to the highest revision.
 */
export async function putAll(
  client: Etcd3,
  prefix: string,
  entries: readonly FixtureEntry[],
): Promise<number> {
  let revision = 0;
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next;
      next += TXN_OPS;
      if (i >= entries.length) return;
      const ops = entries.slice(i, i + TXN_OPS).map((e) => ({
        request_put: { key: Buffer.from(`${prefix}${e.rel}`), value: Buffer.from(e.value) },
      }));
      const res = await client.kv.txn({ compare: [], success: ops, failure: [] });
      revision = Math.max(revision, Number(res.header.revision));
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return revision;
}

/** One put; resolves to its revision. */
export async function putOne(client: Etcd3, key: string, value: string): Promise<number> {
  const res = await client.put(key).value(value).exec();
  return Number(res.header.revision);
}
