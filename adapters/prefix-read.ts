import type { Etcd3 } from "etcd3";
import { type PagedRange, type PagedRangeOptions, readRangePaged } from "./paged-range.js";

/** One key under the prefix, with the metadata compare-and-swap needs. */
export interface PrefixEntry {
  /** The full etcd key. */
  readonly key: string;
  /** The key relative to the prefix, e.g. `country/DE`. */
  readonly rel: string;
  readonly value: Buffer;
  readonly createRevision: number;
  readonly modRevision: number;
  /** Lease id (decimal string), `"0"` when the key has none. */
  readonly lease: string;
}

/** Every key under the prefix, read at one revision. */
export interface PrefixRead {
  /** etcd's revision the read was pinned to. */
  readonly revision: number;
  readonly entries: readonly PrefixEntry[];
}

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

/** A {@link PrefixRead} with its version and what it cost: pages, and restarts after a compaction. */
export interface PrefixReadWithCost
  extends PrefixRead,
    PrefixVersion,
    Pick<PagedRange, "pages" | "restarts"> {}

/**
 * Range-reads the whole prefix, paged, every page pinned to the first page's revision, so every
 * entry is from the same revision however large the prefix (`adapters/paged-range.ts`).
 */
export async function readPrefix(
  client: Etcd3,
  prefix: string,
  opts: PagedRangeOptions = {},
): Promise<PrefixReadWithCost> {
  const res = await readRangePaged(client, prefix, opts);
  let newest = 0;
  const entries = res.kvs.map((kv) => {
    const key = kv.key.toString("utf8");
    const modRevision = Number(kv.mod_revision);
    newest = Math.max(newest, modRevision);
    return {
      key,
      rel: key.slice(prefix.length),
      value: kv.value,
      createRevision: Number(kv.create_revision),
      modRevision,
      lease: kv.lease,
    };
  });
  return {
    revision: res.revision,
    clusterId: res.clusterId,
    count: res.kvs.length,
    newestModRevision: newest,
    entries,
    pages: res.pages,
    restarts: res.restarts,
  };
}
