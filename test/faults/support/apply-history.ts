import type { Etcd3 } from "etcd3";
import { type DesiredState, desiredStateToKeys } from "../../../core/index.js";

/** One `edgectl apply` run of the concurrent-operators scenario. */
export interface ApplyAttempt {
  readonly loop: number;
  readonly marker: string;
  readonly desired: DesiredState;
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Whether this process was SIGSTOP'd while holding the lock. */
  paused: boolean;
  /** From `Applied N changes: epoch E at revision R.` */
  readonly epoch: number | null;
  readonly revision: number | null;
}

const APPLIED = /Applied \d+ changes: epoch (\d+) at revision (\d+)\./;

/** Parses the success line of an apply. */
export function parseApplied(stdout: string): { epoch: number; revision: number } | null {
  const m = APPLIED.exec(stdout);
  return m ? { epoch: Number(m[1]), revision: Number(m[2]) } : null;
}

/**
 * The record of one finished sequential `edgectl apply` (loop 0, never paused), with the epoch
 * and revision from its success line.
 */
export function applyAttemptOf(
  marker: string,
  desired: DesiredState,
  run: { readonly code: number; readonly stdout: string; readonly stderr: string },
): ApplyAttempt {
  const applied = parseApplied(run.stdout);
  return {
    loop: 0,
    marker,
    desired,
    code: run.code,
    stdout: run.stdout,
    stderr: run.stderr,
    paused: false,
    epoch: applied?.epoch ?? null,
    revision: applied?.revision ?? null,
  };
}

/** Every version of `key` modified after `afterRev`, oldest first (walks back by mod revision). */
export async function keyHistory(
  client: Etcd3,
  key: string,
  afterRev: number,
): Promise<{ rev: number; value: string }[]> {
  const out: { rev: number; value: string }[] = [];
  let at: number | null = null;
  for (;;) {
    const q = client.getAll().prefix(key).limit(1);
    if (at !== null) q.revision(String(at));
    const res = await q.exec();
    const kv = res.kvs.find((k) => k.key.toString("utf8") === key);
    if (!kv || Number(kv.mod_revision) <= afterRev) break;
    out.push({ rev: Number(kv.mod_revision), value: kv.value.toString("utf8") });
    at = Number(kv.mod_revision) - 1;
  }
  return out.reverse();
}

/** What the checker found. */
export interface ApplyVerdict {
  readonly successes: number;
  readonly epochBumps: number;
  readonly lostUpdates: number;
  readonly violations: string[];
}

/**
 * The concurrent-apply invariants, judged from etcd's own history (not from what the CLI said):
 * each successful apply bumped the epoch by exactly one at the revision it reported, on top of
 * the state it read (else an update it never saw was lost); failed applies left no trace; and
 * the final intent is exactly the last successful apply's file.
 */
export async function judgeApplies(
  client: Etcd3,
  prefix: string,
  startRev: number,
  attempts: readonly ApplyAttempt[],
  markerKey: string,
): Promise<ApplyVerdict> {
  const violations: string[] = [];
  const ok = attempts.filter((a) => a.code === 0 && a.revision !== null);
  const byRev = new Map(ok.map((a) => [a.revision, a]));
  const epochs = await keyHistory(client, `${prefix}epoch`, startRev);
  let lostUpdates = 0;
  let prev = Number(
    (await client.get(`${prefix}epoch`).revision(String(startRev)).string()) ?? "0",
  );
  for (const e of epochs) {
    const value = Number(e.value);
    const by = byRev.get(e.rev);
    if (!by) violations.push(`epoch changed at rev ${e.rev} (to ${value}) by no successful apply`);
    if (value !== prev + 1) {
      lostUpdates += 1;
      violations.push(
        `epoch went ${prev} → ${value} at rev ${e.rev} (${by?.marker ?? "?"} committed on a stale read: a lost update)`,
      );
    }
    if (by && by.epoch !== value)
      violations.push(`${by.marker} reported epoch ${by.epoch}, etcd has ${value}`);
    prev = value;
  }
  if (epochs.length !== ok.length)
    violations.push(`${ok.length} successful applies but ${epochs.length} epoch bumps`);
  const markers = await keyHistory(client, markerKey, startRev);
  const seen = new Set(markers.map((m) => (JSON.parse(m.value) as { region?: string }).region));
  for (const a of attempts) {
    if (a.code === 0 && !seen.has(a.marker))
      violations.push(`${a.marker} reported success but never reached etcd`);
    if (a.code !== 0 && seen.has(a.marker))
      violations.push(`${a.marker} exited ${a.code} yet its write is in etcd`);
  }
  const last = ok.reduce<ApplyAttempt | null>(
    (m, a) => (!m || (a.revision ?? 0) > (m.revision ?? 0) ? a : m),
    null,
  );
  if (last) {
    const want = desiredStateToKeys(last.desired, prefix);
    const res = await client.getAll().prefix(prefix).exec();
    const have = new Map(
      res.kvs
        .map((kv) => [kv.key.toString("utf8"), kv.value.toString("utf8")] as const)
        .filter(([k]) => k.startsWith(`${prefix}pool/`) || k.startsWith(`${prefix}country/`)),
    );
    const same = want.size === have.size && [...want].every(([k, v]) => have.get(k) === v);
    if (!same) violations.push(`final intent is not the last successful apply (${last.marker})`);
  }
  return { successes: ok.length, epochBumps: epochs.length, lostUpdates, violations };
}
