import { type Etcd3, type IResponseHeader, SortOrder, SortTarget } from "etcd3";
import type { Snapshot } from "../core/index.js";

/** Where a read came from and what the prefix looked like: enough to tell whether it moved. */
export interface PrefixVersion {
  /** etcd's revision when the read was served. */
  readonly revision: number;
  /** The cluster that served it; a new one (a replaced etcd) starts a new history. */
  readonly clusterId: string;
  /** Keys under the prefix. */
  readonly count: number;
  /** The newest `mod_revision` under the prefix (0 when it is empty). */
  readonly newestModRevision: number;
}

/** A consistent snapshot of the prefix plus its version. */
export type PrefixRead = Snapshot & PrefixVersion;

function headerOf(header: IResponseHeader): Pick<PrefixVersion, "revision" | "clusterId"> {
  return { revision: Number(header.revision), clusterId: String(header.cluster_id) };
}

/**
 * Reads every key under `prefix` in one range request, so all values come from the single
 * revision in the response header: a consistent snapshot, whatever the watch delivered.
 */
export async function readPrefix(client: Etcd3, prefix: string): Promise<PrefixRead> {
  const res = await client.getAll().prefix(prefix).exec();
  let newest = 0;
  for (const kv of res.kvs) newest = Math.max(newest, Number(kv.mod_revision));
  return {
    ...headerOf(res.header),
    count: res.kvs.length,
    newestModRevision: newest,
    entries: res.kvs.map((kv) => ({ key: kv.key.toString("utf8"), value: kv.value })),
  };
}

/** `readPrefix`, as a plain snapshot (what tests and benchmarks compile). */
export function readPrefixSnapshot(client: Etcd3, prefix: string): Promise<Snapshot> {
  return readPrefix(client, prefix);
}

/**
 * A cheap linearizable read of the prefix's version: keys only, the newest by `mod_revision`,
 * limit 1, with the total count. A put under the prefix raises the newest revision and a delete
 * lowers the count, so comparing two versions tells whether anything changed in between.
 */
export async function readPrefixVersion(client: Etcd3, prefix: string): Promise<PrefixVersion> {
  const key = Buffer.from(prefix);
  const res = await client.kv.range({
    key,
    range_end: prefixEnd(key),
    keys_only: true,
    limit: 1,
    sort_order: SortOrder.Descend,
    sort_target: SortTarget.Mod,
  });
  return {
    ...headerOf(res.header),
    count: Number(res.count),
    newestModRevision: Number(res.kvs[0]?.mod_revision ?? 0),
  };
}

/** The range end of a prefix, as etcd computes it: drop trailing 0xff bytes, increment the last. */
function prefixEnd(prefix: Buffer): Buffer {
  let n = prefix.length;
  while (n > 0 && prefix[n - 1] === 0xff) n--;
  if (n === 0) return Buffer.from([0]);
  const end = Buffer.from(prefix.subarray(0, n));
  end[n - 1] = (end[n - 1] ?? 0) + 1;
  return end;
}
