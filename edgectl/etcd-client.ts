import { noop } from "cockatiel";
import {
  Etcd3,
  EtcdLeaseInvalidError,
  GRPCDeadlineExceededError,
  GRPCNotFoundError,
  GRPCUnavailableError,
} from "etcd3";
import { fastRecoveryBreaker } from "../adapters/etcd-fault-handling.js";
import { etcdClientOptions } from "../adapters/etcd-options.js";
import type { Snapshot } from "../core/index.js";
import type { CliSettings } from "./cli-settings.js";

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

/** Opens an etcd client with a deadline on every unary call (streams are left open). */
export function openEtcd(settings: CliSettings): Etcd3 {
  const timeout = settings.etcdTimeoutMs;
  return new Etcd3({
    ...etcdClientOptions(settings.etcd),
    dialTimeout: timeout,
    defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + timeout }),
    // No automatic re-sends: etcd3's default global policy retries any recoverable error, and a
    // re-sent apply transaction that already landed would be reported as a conflict.
    faultHandling: { host: fastRecoveryBreaker, global: noop },
  });
}

/** Range-reads the whole prefix in one request, so every entry is from the same revision. */
export async function readPrefix(client: Etcd3, prefix: string): Promise<PrefixRead> {
  const res = await client.getAll().prefix(prefix).exec();
  return {
    revision: Number(res.header.revision),
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

/** The read as the core's snapshot (values stay bytes, so non-UTF-8 is still detected). */
export function toSnapshot(read: PrefixRead): Snapshot {
  return {
    revision: read.revision,
    entries: read.entries.map((e) => ({ key: e.key, value: new Uint8Array(e.value) })),
  };
}

/** Runs `fn` with a fresh client and always closes it. */
export async function withEtcd<T>(
  settings: CliSettings,
  fn: (client: Etcd3) => Promise<T>,
): Promise<T> {
  const client = openEtcd(settings);
  try {
    return await fn(client);
  } finally {
    client.close();
  }
}

/**
 * True when a request may or may not have taken effect (it timed out, the connection dropped) or
 * its lease vanished meanwhile (the process was paused past the TTL): the caller must check.
 */
export function isUncertainOutcome(e: unknown): boolean {
  return (
    e instanceof GRPCDeadlineExceededError ||
    e instanceof GRPCUnavailableError ||
    e instanceof GRPCNotFoundError ||
    e instanceof EtcdLeaseInvalidError
  );
}
