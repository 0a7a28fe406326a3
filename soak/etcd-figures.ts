import type { Etcd3 } from "etcd3";
import { parsePromText } from "../testkit/prom-text.js";

/** Every sample of a `/metrics` text summed by name (labels added up). */
export function metricTotals(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of parsePromText(text)) out.set(s.name, (out.get(s.name) ?? 0) + s.value);
  return out;
}

/** The first of `names` that `totals` has, with its value; names differ across etcd versions. */
export function firstPresent(
  totals: ReadonlyMap<string, number>,
  names: readonly string[],
): { readonly name: string; readonly value: number } | null {
  for (const name of names) {
    const value = totals.get(name);
    if (value !== undefined) return { name, value };
  }
  return null;
}

/**
 * Metric names by what they count, the current one first (etcd 3.4.23 and 3.5.16 checked by
 * running them; etcd's current source keeps them; `etcd_storage_…` is older). etcd counts leases only as counters
 * (`etcd_debugging_lease_granted_total`, `…_revoked_total`; an expired lease is revoked through
 * raft, so every member counts it); a member that restarted starts them again from 0, which
 * newer etcd corrects with `etcd_debugging_lease_initial_lease_count` (the leases it recovered).
 * Watchers and watch streams are gauges per member.
 */
export const ETCD_METRIC_NAMES = {
  granted: ["etcd_debugging_lease_granted_total"],
  revoked: ["etcd_debugging_lease_revoked_total"],
  initial: ["etcd_debugging_lease_initial_lease_count"],
  watchers: ["etcd_debugging_mvcc_watcher_total", "etcd_storage_watcher_total"],
  watchStreams: ["etcd_debugging_mvcc_watch_stream_total", "etcd_storage_watch_stream_total"],
} as const;

/** What one member's metrics say. */
export interface MemberFigures {
  /** Leases held by its count; null when it has no lease counters. */
  readonly leases: number | null;
  /** Whether `leases` includes the leases recovered at start (the member's restart is safe). */
  readonly countsRecovered: boolean;
  readonly watchers: number | null;
  readonly watchStreams: number | null;
  /** Names used, for the report. */
  readonly names: readonly string[];
}

/** Reads figures from one member's `/metrics` text. */
export function memberFigures(text: string): MemberFigures {
  const t = metricTotals(text);
  const granted = firstPresent(t, ETCD_METRIC_NAMES.granted);
  const revoked = firstPresent(t, ETCD_METRIC_NAMES.revoked);
  const initial = firstPresent(t, ETCD_METRIC_NAMES.initial);
  const watchers = firstPresent(t, ETCD_METRIC_NAMES.watchers);
  const streams = firstPresent(t, ETCD_METRIC_NAMES.watchStreams);
  return {
    leases:
      granted && revoked ? granted.value - revoked.value + (initial ? initial.value : 0) : null,
    countsRecovered: initial !== null,
    watchers: watchers?.value ?? null,
    watchStreams: streams?.value ?? null,
    names: [granted, revoked, initial, watchers, streams].flatMap((x) => (x ? [x.name] : [])),
  };
}

/** `/metrics` of a member, or null when it does not answer. */
export async function fetchMetrics(endpoint: string): Promise<string | null> {
  try {
    const res = await fetch(`${endpoint}/metrics`, { signal: AbortSignal.timeout(2_000) });
    return res.ok ? await res.text() : null;
  } catch {
    return null;
  }
}

/** Leases etcd lists (LeaseLeases), or null when the member does not answer. */
export async function listedLeases(client: Etcd3): Promise<number | null> {
  try {
    const res = await client.leaseClient.leaseLeases();
    return res.leases.length;
  } catch {
    return null;
  }
}

/**
 * Distinct leases attached to keys under `prefix` other than `health/` and `observed/` (the
 * boosts'), or null when the member does not answer.
 */
export async function boostLeases(client: Etcd3, prefix: string): Promise<number | null> {
  try {
    const res = await client.getAll().prefix(prefix).exec();
    const leases = new Set<string>();
    for (const kv of res.kvs) {
      const key = kv.key.toString("utf8");
      if (
        kv.lease !== "0" &&
        !key.startsWith(`${prefix}health/`) &&
        !key.startsWith(`${prefix}observed/`)
      )
        leases.add(kv.lease);
    }
    return leases.size;
  } catch {
    return null;
  }
}
