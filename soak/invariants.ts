import { AGGREGATOR_KEPT_MINUTES } from "./layout.js";
import {
  type Convergence,
  type KillEvent,
  type LeasePoll,
  leasesBackAfterKills,
} from "./oracle.js";
import type { UiTab } from "./ui-clients.js";
import type { ViewerFindings } from "./viewer-figures.js";

/** What a finished run knows that its invariants are judged on (soak/README.md). */
export interface RunRecord {
  /** Measured seconds asked for. */
  readonly seconds: number;
  /** Seconds actually measured. */
  readonly endT: number;
  readonly convergences: readonly Convergence[];
  /** The Worker's answers by status (0: no answer). */
  readonly answers: ReadonlyMap<number, number>;
  readonly leasePolls: readonly LeasePoll[];
  readonly kills: readonly KillEvent[];
  readonly baseline: number;
  readonly finalHeld: number | null;
  /** Series still exported for pools etcd no longer defines. */
  readonly seriesLeft: readonly string[];
  /** Rule changes the driver made. */
  readonly changes: number;
  /** The `/ui` tabs on the snapshot pusher (ui-clients.ts). */
  readonly ui: { readonly held: UiTab; readonly reloaded: UiTab };
  /** The observer, its counters and keys, and the aggregator (viewer-figures.ts). */
  readonly viewers: ViewerFindings;
}

/** The longest a held `/ui/events` stream may go without an event: the pusher pings every 5 s. */
export const UI_MAX_SILENCE_MS = 15_000;

/** Each invariant of the whole run that did not hold, in words; empty when all held. */
export function invariantFailures(r: RunRecord): string[] {
  const failures: string[] = [];
  for (const c of r.convergences.filter((x) => x.ms === null))
    failures.push(
      `invariant: at t=${c.t.toFixed(0)} s KV did not equal compile(etcd) within 30 s: ${c.mismatch}`,
    );
  if (r.convergences.length < Math.floor(r.seconds / 10) - 2)
    failures.push(`invariant: only ${r.convergences.length} convergence checks ran`);
  for (const [status, n] of r.answers)
    if (status < 200 || status > 299)
      failures.push(`invariant: the Worker answered ${n} × ${status === 0 ? "no answer" : status}`);
  for (const miss of leasesBackAfterKills(r.leasePolls, r.kills, r.baseline, r.endT))
    failures.push(`invariant: leases did not return to baseline after ${miss}`);
  if (r.finalHeld !== r.baseline)
    failures.push(
      `invariant: leases held at the end ${r.finalHeld ?? "unknown"}, at the start ${r.baseline}`,
    );
  for (const s of r.seriesLeft) failures.push(`series: ${s}`);
  const { held, reloaded } = r.ui;
  if (held.opened !== 1 || held.endedEarly !== null)
    failures.push(`ui: the held /ui/events stream ended: ${held.endedEarly ?? "never opened"}`);
  if (held.maxGapMs > UI_MAX_SILENCE_MS)
    failures.push(
      `ui: the held /ui/events stream went ${(held.maxGapMs / 1000).toFixed(1)} s without an event (pings every 5 s)`,
    );
  if (held.maps === 0) failures.push("ui: the held /ui/events stream got no map event");
  if (reloaded.failed > 0)
    failures.push(
      `ui: ${reloaded.failed} of ${reloaded.failed + reloaded.opened} reloaded /ui/events streams failed: ${reloaded.endedEarly}`,
    );
  failures.push(...viewerFailures(r.viewers));
  if (r.changes < r.seconds * 10 * 0.6)
    failures.push(`driver: only ${r.changes} changes in ${r.seconds} s (goal 10/s)`);
  return failures;
}

/**
 * What viewers' side broke: the observer's counters fell or lost a series, an `observed/` key
 * was off the observer's lease, the aggregator kept minutes past its 16, or nothing was
 * counted at all (a soak that recorded nothing proves nothing).
 */
export function viewerFailures(v: ViewerFindings): string[] {
  const failures: string[] = [];
  const c = v.counters;
  if (c.dropCount > 0)
    failures.push(
      `observer: viewer counters fell or went missing ${c.dropCount} times (they only grow): ${c.drops.slice(0, 3).join("; ")}`,
    );
  if (c.scrapes === 0) failures.push("observer: its /metrics never answered");
  else if (c.requests === 0) failures.push("observer: it counted no viewer requests");
  else if (c.starved === 0)
    failures.push("observer: it counted no starved requests (the players' CMCD did not reach it)");
  if (v.maxKeys === 0) failures.push("observer: it wrote no observed/ key");
  if (v.offLeaseCount > 0)
    failures.push(
      `observed/: ${v.offLeaseCount} times a key was not on the observer's lease: ${v.offLease.slice(0, 3).join("; ")}`,
    );
  if (v.maxRows === 0) failures.push("aggregator: its Durable Objects stored no rows");
  if (v.maxMinutesHeld > AGGREGATOR_KEPT_MINUTES + 1)
    failures.push(
      `aggregator: it held ${v.maxMinutesHeld} minutes of rows (it keeps ${AGGREGATOR_KEPT_MINUTES})`,
    );
  return failures;
}
