import type { EtcdMembers } from "../../adapters/etcd-members.js";
import { type PrefixRead, readPrefix } from "../../adapters/prefix-read.js";
import type { Snapshot } from "../../core/index.js";

/** {@link readPrefix} through whichever member answers. */
export function readPrefixFromAny(members: EtcdMembers, prefix: string): Promise<PrefixRead> {
  return members.any(`read ${prefix}`, (c, call) =>
    readPrefix(c, prefix, { callOptions: () => call }),
  );
}

/** The read as the core's snapshot (values stay bytes, so non-UTF-8 is still detected). */
export function toSnapshot(read: PrefixRead): Snapshot {
  return {
    revision: read.revision,
    entries: read.entries.map((e) => ({ key: e.key, value: new Uint8Array(e.value) })),
  };
}
