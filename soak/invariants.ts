import {
  type Convergence,
  type KillEvent,
  type LeasePoll,
  leasesBackAfterKills,
} from "./oracle.js";

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
}

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
  if (r.changes < r.seconds * 10 * 0.6)
    failures.push(`driver: only ${r.changes} changes in ${r.seconds} s (goal 10/s)`);
  return failures;
}
