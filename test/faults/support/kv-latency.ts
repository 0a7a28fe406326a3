import { setTimeout as sleep } from "node:timers/promises";
import { parseMap } from "../../../core/index.js";
import { metaRevision, type RecordedWrite } from "./kv-recorder.js";

/** A change the scenario committed: etcd's revision for it and when it was acknowledged. */
export interface CommittedChange {
  readonly label: string;
  readonly rev: number;
  /** `Date.now()` when the commit was acknowledged (the commit happened no later). */
  readonly at: number;
}

/**
 * The revisions KV reflected over time: each `routes` write with its map's `rev`, and each `meta`
 * write with the revision it confirms `routes` at (a change that leaves routing as it was is in
 * KV once `meta` confirms it: docs/reference.md §3). Unparsable writes count as -1.
 */
export function kvTimeline(writes: readonly RecordedWrite[]): { at: number; rev: number }[] {
  const out: { at: number; rev: number }[] = [];
  for (const w of writes) {
    if (w.key === "routes") out.push({ at: w.at, rev: parseMap(w.value)?.rev ?? -1 });
    else if (w.key === "meta") out.push({ at: w.at, rev: metaRevision(w.value) });
  }
  return out;
}

/**
 * Milliseconds from `since` (default: the change's acknowledgement) to the first KV write at the
 * change's revision or later (`kvTimeline`), i.e. the first time KV reflects it; null if none.
 */
export function kvLatency(
  timeline: readonly { at: number; rev: number }[],
  change: CommittedChange,
  since = change.at,
): number | null {
  const w = timeline.find((t) => t.rev >= change.rev);
  return w ? Math.max(0, w.at - since) : null;
}

/**
 * Waits until every change is in KV (per `timeline()`) or `limitMs` has passed since the latest
 * acknowledgement, whichever comes first.
 */
export async function waitAllInKv(
  timeline: () => readonly { at: number; rev: number }[],
  changes: readonly CommittedChange[],
  limitMs: number,
): Promise<void> {
  const last = Math.max(0, ...changes.map((c) => c.at));
  while (Date.now() - last <= limitMs) {
    const t = timeline();
    if (changes.every((c) => kvLatency(t, c) !== null)) return;
    await sleep(100);
  }
}

/** Median and maximum of a list of milliseconds (null when empty). */
export function spread(ms: readonly number[]): { median: number; max: number } | null {
  if (ms.length === 0) return null;
  const s = [...ms].sort((a, b) => a - b);
  return { median: s[Math.floor((s.length - 1) / 2)] ?? 0, max: s[s.length - 1] ?? 0 };
}

/** `median 1.2 s, max 3.4 s (n=7)`. */
export function describeSpread(ms: readonly number[]): string {
  const s = spread(ms);
  if (!s) return "no samples";
  return `median ${(s.median / 1000).toFixed(1)} s, max ${(s.max / 1000).toFixed(1)} s (n=${ms.length})`;
}
