import type { Etcd3 } from "etcd3";
import { readRangePaged } from "../../adapters/paged-range.js";
import type { Snapshot } from "../../core/index.js";
import type { AttemptOptions, EtcdMembers } from "./etcd-members.js";

/** One key under the prefix with the metadata CAS needs. */
export interface StoredEntry {
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
  readonly revision: number;
  readonly entries: readonly StoredEntry[];
}

/**
 * Range-reads the whole prefix, paged, every page pinned to the first page's revision, so every
 * entry is from the same revision however large the prefix (`adapters/paged-range.ts`).
 */
export async function readPrefix(
  client: Etcd3,
  prefix: string,
  call?: AttemptOptions,
): Promise<PrefixRead> {
  const res = await readRangePaged(client, prefix, call ? { callOptions: () => call } : {});
  return {
    revision: res.revision,
    entries: res.kvs.map((kv) => {
      const key = kv.key.toString("utf8");
      return {
        key,
        rel: key.slice(prefix.length),
        value: kv.value,
        createRevision: Number(kv.create_revision),
        modRevision: Number(kv.mod_revision),
        lease: kv.lease,
      };
    }),
  };
}

/** {@link readPrefix} through whichever member answers. */
export function readPrefixFromAny(members: EtcdMembers, prefix: string): Promise<PrefixRead> {
  return members.any(`read ${prefix}`, (c, call) => readPrefix(c, prefix, call));
}

/** The read as the core's snapshot (values stay bytes, so non-UTF-8 is still detected). */
export function toSnapshot(read: PrefixRead): Snapshot {
  return {
    revision: read.revision,
    entries: read.entries.map((e) => ({ key: e.key, value: new Uint8Array(e.value) })),
  };
}
