import { setTimeout as sleep } from "node:timers/promises";
import type { Etcd3 } from "etcd3";
import { type CompiledMap, compile, parseMap } from "../core/index.js";
import { describeMismatch, matches, readSnapshot } from "../testkit/map-oracle.js";
import type { SoakClock } from "./clock.js";
import type { Driver } from "./driver.js";
import { boostLeases, listedLeases } from "./etcd-figures.js";
import { FLOOR_POOL, HEARTBEAT_TTL } from "./layout.js";
import type { World } from "./world.js";

/** One check that KV caught up with etcd. */
export interface Convergence {
  readonly t: number;
  /** ms from pausing the driver until KV's routes equalled compile(etcd); null: never. */
  readonly ms: number | null;
  /** Why it did not converge (null when it did). */
  readonly mismatch: string | null;
}

/** The longest the oracle waits for KV to equal compile(etcd) (a failover fits in it). */
export const CONVERGE_TIMEOUT_MS = 30_000;

/** Runs `fn` on each running member's client in turn until one answers (20 s at most). */
export async function anyMember<T>(world: World, fn: (c: Etcd3) => Promise<T>): Promise<T> {
  const deadline = Date.now() + 20_000;
  let last: unknown;
  while (Date.now() < deadline) {
    for (const [i, c] of world.members.entries()) {
      if (!world.cluster.members[i]?.running) continue;
      try {
        return await fn(c);
      } catch (e) {
        last = e;
      }
    }
    await sleep(200);
  }
  throw new Error(`no etcd member answered: ${String(last)}`);
}

/** compile(range read of etcd) with the pusher's settings. */
export async function expectedMap(world: World): Promise<CompiledMap> {
  const snap = await anyMember(world, (c) => readSnapshot(c, world.prefix));
  return compile(snap, {
    carried: null,
    prefix: world.prefix,
    floorPool: FLOOR_POOL,
    originTemplate: world.originTemplate,
    now: new Date(),
  }).map;
}

function kvRoutes(world: World): CompiledMap | null {
  const text = world.kv.values.get("routes");
  return text === undefined ? null : parseMap(text);
}

/**
 * Holds the driver's rule writes and waits until KV's `routes` has the routing of
 * compile(etcd) (`sameRouting`, with the epoch; not the revision), compiling afresh each time
 * (boosts expire, pools come and go meanwhile).
 */
export async function checkConverged(
  world: World,
  driver: Driver,
  clock: SoakClock,
): Promise<Convergence> {
  const t = clock.now();
  const started = Date.now();
  driver.pause();
  try {
    let last = "";
    while (Date.now() - started < CONVERGE_TIMEOUT_MS) {
      const expected = await expectedMap(world);
      const inKv = kvRoutes(world);
      if (matches(inKv, expected)) return { t, ms: Date.now() - started, mismatch: null };
      last = describeMismatch(inKv, expected);
      await sleep(100);
    }
    return { t, ms: null, mismatch: last };
  } finally {
    driver.resume();
  }
}

/** One poll of the leases etcd holds for heartbeats, pushers and anything else not a boost. */
export interface LeasePoll {
  readonly t: number;
  readonly held: number;
}

/** Leases listed by etcd less the boosts' (null when no member answered). */
export async function heldLeases(world: World): Promise<number | null> {
  for (const [i, c] of world.members.entries()) {
    if (!world.cluster.members[i]?.running) continue;
    const [listed, boosts] = await Promise.all([listedLeases(c), boostLeases(c, world.prefix)]);
    if (listed !== null && boosts !== null) return listed - boosts;
  }
  return null;
}

/**
 * The leases held once the start has settled: polled every 500 ms until they are `expected` (one
 * per heartbeat and electing pusher), or `waitMs` has passed, when the last count stands. A grant
 * whose answer was lost while the cluster started (the client asked another member) leaves a lease
 * nothing holds; it expires within its TTL and is no baseline.
 */
export async function settledLeases(
  world: World,
  expected: number,
  waitMs: number,
): Promise<number | null> {
  const deadline = Date.now() + waitMs;
  let held = await heldLeases(world);
  while (held !== expected && Date.now() < deadline) {
    await sleep(500);
    held = (await heldLeases(world)) ?? held;
  }
  return held;
}

/**
 * The leases held as the soak starts, and its baseline: {@link settledLeases} for one lease per
 * heartbeat and electing pusher and the observer's, waited for up to the heartbeats' TTL + 5 s.
 */
export async function leaseBaseline(
  world: World,
): Promise<{ atStart: number | null; baseline: number }> {
  const atStart = await heldLeases(world);
  const expected = world.heartbeats.length + world.pushers.length + 1;
  const baseline = await settledLeases(world, expected, (HEARTBEAT_TTL + 5) * 1000);
  if (baseline === null) throw new Error("etcd listed no leases at start");
  return { atStart, baseline };
}

/** A kill, and when the leases of what it killed must be gone (its TTL after the kill). */
export interface KillEvent {
  readonly t: number;
  readonly what: string;
  /** Seconds after `t` by which the killed process's lease has expired. */
  readonly ttl: number;
}

/** Seconds after a lease's expiry within which the count must be back at the baseline. */
export const LEASE_SETTLE_SECONDS = 20;

/**
 * For every kill: did the leases held come back to `baseline` in
 * [t + ttl, t + ttl + LEASE_SETTLE_SECONDS]? Returns the kills after which they did not.
 */
export function leasesBackAfterKills(
  polls: readonly LeasePoll[],
  kills: readonly KillEvent[],
  baseline: number,
  endT: number,
): string[] {
  const out: string[] = [];
  for (const k of kills) {
    const from = k.t + k.ttl;
    const to = from + LEASE_SETTLE_SECONDS;
    if (to > endT) continue;
    const seen = polls.filter((p) => p.t >= from && p.t <= to);
    if (!seen.some((p) => p.held === baseline))
      out.push(
        `${k.what} at t=${k.t.toFixed(0)} s: leases held ${[...new Set(seen.map((p) => p.held))].join("/") || "unknown"} in ${from.toFixed(0)}–${to.toFixed(0)} s, baseline ${baseline}`,
      );
  }
  return out;
}
