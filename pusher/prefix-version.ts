import {
  type Etcd3,
  GRPCResourceExhastedError,
  type IResponseHeader,
  SortOrder,
  SortTarget,
} from "etcd3";
import { prefixEnd } from "../adapters/paged-range.js";
import type { PrefixVersion } from "../adapters/prefix-read.js";
import type { SnapshotEntry } from "../core/index.js";

function headerOf(header: IResponseHeader): Pick<PrefixVersion, "revision" | "clusterId"> {
  return { revision: Number(header.revision), clusterId: String(header.cluster_id) };
}

/** The keys of a prefix modified after a revision, and the prefix's size, at one revision. */
export interface PrefixDelta extends Pick<PrefixVersion, "revision" | "clusterId" | "count"> {
  /** Keys whose `mod_revision` is above the `since` asked for, with their values. */
  readonly changed: readonly SnapshotEntry[];
}

/**
 * One range request over the whole prefix at one revision, filtered by etcd to the keys modified
 * after `since` (`min_mod_revision`), with the count of every key under the prefix. Null when
 * more than `limit` keys changed or their values do not fit one gRPC message: read it all then.
 */
export async function readPrefixDelta(
  client: Etcd3,
  prefix: string,
  since: number,
  limit: number,
): Promise<PrefixDelta | null> {
  const key = Buffer.from(prefix);
  let res: Awaited<ReturnType<Etcd3["kv"]["range"]>>;
  try {
    res = await client.kv.range({
      key,
      range_end: prefixEnd(key),
      min_mod_revision: since + 1,
      limit,
    });
  } catch (e) {
    if (e instanceof GRPCResourceExhastedError) return null;
    throw e;
  }
  if (res.more) return null;
  return {
    ...headerOf(res.header),
    count: Number(res.count),
    changed: res.kvs.map((kv) => ({
      key: kv.key.toString("utf8"),
      value: kv.value,
      modRevision: Number(kv.mod_revision),
    })),
  };
}

/** What a read of one key tells about the prefix: etcd's revision, the cluster, the key count. */
export type PrefixHead = Pick<PrefixVersion, "revision" | "clusterId" | "count">;

/**
 * The cheapest linearizable look at the prefix: one key, keys only, unsorted, with the total
 * count. etcd 3.4 answers it from its in-memory index. Its revision is etcd's, not the prefix's:
 * a revision not above one already known means nothing was committed since, anywhere.
 */
export async function readPrefixHead(client: Etcd3, prefix: string): Promise<PrefixHead> {
  const res = await rangeOneKey(client, prefix, {});
  return { ...headerOf(res.header), count: Number(res.count) };
}

/** One key of the prefix, keys only, with the total count; `order` sorts before the limit. */
function rangeOneKey(
  client: Etcd3,
  prefix: string,
  order: { readonly sort_order?: SortOrder; readonly sort_target?: SortTarget },
) {
  const key = Buffer.from(prefix);
  return client.kv.range({ key, range_end: prefixEnd(key), keys_only: true, limit: 1, ...order });
}

/**
 * A linearizable read of the prefix's version: keys only, the newest by `mod_revision`,
 * limit 1, with the total count. A put under the prefix raises the newest revision and a delete
 * lowers the count, so comparing two versions tells whether anything changed in between. Sorting
 * makes etcd 3.4 load every value under the prefix (limits apply after the sort): costly on a
 * large prefix, so the watch guard asks only when the cheap {@link readPrefixHead} cannot decide.
 */
export async function readPrefixVersion(client: Etcd3, prefix: string): Promise<PrefixVersion> {
  const res = await rangeOneKey(client, prefix, {
    sort_order: SortOrder.Descend,
    sort_target: SortTarget.Mod,
  });
  return {
    ...headerOf(res.header),
    count: Number(res.count),
    newestModRevision: Number(res.kvs[0]?.mod_revision ?? 0),
  };
}
