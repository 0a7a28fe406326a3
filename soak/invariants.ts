import {
  type Convergence,
  type KillEvent,
  type LeasePoll,
  leasesBackAfterKills,
} from "./oracle.js";
import type { UiTab } from "./ui-clients.js";

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
  if (r.changes < r.seconds * 10 * 0.6)
    failures.push(`driver: only ${r.changes} changes in ${r.seconds} s (goal 10/s)`);
  return failures;
}
