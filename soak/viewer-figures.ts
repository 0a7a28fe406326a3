import { setTimeout as sleep } from "node:timers/promises";
import { aggregatorStorage } from "./aggregator-storage.js";
import type { CounterWatch } from "./counter-watch.js";
import { OBSERVER_TTL } from "./layout.js";
import { keysOffLease, type ObservedKey } from "./observed-leases.js";
import type { SoakObserver } from "./observer-process.js";
import { LEASE_SETTLE_SECONDS } from "./oracle.js";
import type { Figure } from "./samples.js";
import type { World } from "./world.js";

/** What viewers' checks found over a run (the invariants judge it). */
export interface ViewerFindings {
  readonly counters: Pick<CounterWatch, "scrapes" | "requests" | "starved" | "dropCount" | "drops">;
  /** `observed/` keys found off the observer's lease, in words (the first 20), and how many. */
  readonly offLease: string[];
  offLeaseCount: number;
  /** The most `observed/` keys seen at once. */
  maxKeys: number;
  /** The most rows the aggregator held at once, all shards together. */
  maxRows: number;
  /** The most minutes the aggregator held at once (now's minute less its oldest, plus one). */
  maxMinutesHeld: number;
  /** The most bytes its files took. */
  maxStorageBytes: number;
}

/** Viewers' side of the soak: the observer, the aggregator's files, and what was found. */
export interface Viewers extends ViewerFindings {
  readonly observer: SoakObserver;
  /** workerd's persist directory (the aggregator's SQLite files). */
  readonly persistDir: string;
  readonly counters: CounterWatch;
}

/** A newly made {@link Viewers}. */
export function newViewers(
  observer: SoakObserver,
  persistDir: string,
  counters: CounterWatch,
): Viewers {
  return {
    observer,
    persistDir,
    counters,
    offLease: [],
    offLeaseCount: 0,
    maxKeys: 0,
    maxRows: 0,
    maxMinutesHeld: 0,
    maxStorageBytes: 0,
  };
}

/** A killed observer's keys stay until its lease expires: its TTL, and etcd's time to act. */
const LEASE_GRACE_MS = (OBSERVER_TTL + LEASE_SETTLE_SECONDS) * 1000;

/** The `observed/` keys with their leases, from the first running member that answers. */
async function observedKeys(world: World): Promise<ObservedKey[] | null> {
  for (const [i, c] of world.members.entries()) {
    if (!world.cluster.members[i]?.running) continue;
    try {
      const res = await c.getAll().prefix(`${world.prefix}observed/`).exec();
      return res.kvs.map((kv) => ({ key: kv.key.toString("utf8"), lease: kv.lease }));
    } catch {
      // the next member
    }
  }
  return null;
}

/**
 * One sample of viewers' side at `t` (s): the observer's counters in `observerMetrics`, its
 * `/metrics` scraped at `t` (they only grow), the
 * `observed/` keys (how many, each on the observer's lease) and the aggregator's storage.
 */
export async function sampleViewers(
  world: World,
  v: Viewers,
  t: number,
  observerMetrics: string | null,
  put: (series: string, figure: Figure, value: number | null | undefined, age?: number) => void,
  workerdAge: number,
): Promise<void> {
  const [keys, storage] = await Promise.all([observedKeys(world), aggregatorStorage(v.persistDir)]);
  if (observerMetrics) v.counters.see(t, `observer#${v.observer.proc.pid}`, observerMetrics);
  if (keys) {
    put("cluster", "observed_keys", keys.length);
    v.maxKeys = Math.max(v.maxKeys, keys.length);
    let off = keysOffLease(keys, v.observer.leases(), Date.now(), LEASE_GRACE_MS);
    if (off.length > 0) {
      // the observer may have registered a moment ago: its log line can trail its first write
      await sleep(1_000);
      off = keysOffLease(keys, v.observer.leases(), Date.now(), LEASE_GRACE_MS);
    }
    v.offLeaseCount += off.length;
    for (const o of off) if (v.offLease.length < 20) v.offLease.push(`t=${t.toFixed(0)} s: ${o}`);
  }
  if (storage) {
    put("aggregator", "do_storage_mib", storage.bytes / 2 ** 20, workerdAge);
    put("aggregator", "do_files_mib", storage.fileBytes / 2 ** 20, workerdAge);
    put("aggregator", "do_rows", storage.rows, workerdAge);
    v.maxRows = Math.max(v.maxRows, storage.rows);
    v.maxStorageBytes = Math.max(v.maxStorageBytes, storage.bytes);
    if (storage.oldestMinute !== null) {
      const held = Math.floor(Date.now() / 60_000) - storage.oldestMinute + 1;
      put("aggregator", "do_minutes", held, workerdAge);
      v.maxMinutesHeld = Math.max(v.maxMinutesHeld, held);
    }
  }
}
