import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Etcd3 } from "etcd3";
import { type OwnedProcess, spawnOwned } from "../../../testkit/owned-process.js";
import { ROOT } from "../../../testkit/pusher-process.js";
import type { FaultContext } from "../scenario.js";
import type { MemberClients } from "./cluster-world.js";

/** Starts one real `edgectl heartbeat POOL` per pool; resolves once every key sits on a lease. */
export async function startHeartbeats(
  ctx: FaultContext,
  env: Record<string, string>,
  mc: MemberClients,
  prefix: string,
  pools: readonly string[],
  args: readonly string[],
): Promise<OwnedProcess[]> {
  const procs = pools.map((pool) => {
    const p = spawnOwned(
      `heartbeat ${pool}`,
      process.execPath,
      [join(ROOT, "bin/edgectl.js"), "heartbeat", pool, ...args],
      {
        env: { PATH: process.env.PATH, HOME: process.env.HOME, TMPDIR: process.env.TMPDIR, ...env },
        cwd: ROOT,
        onOutput: (t) => ctx.transcript.add(`heartbeat ${pool}`, "log", t),
      },
    );
    ctx.defer(() => p.stop(3_000));
    return p;
  });
  const deadline = Date.now() + 30_000;
  for (;;) {
    const leased = await mc.any(async (c) => {
      const res = await c.getAll().prefix(`${prefix}health/`).exec();
      return res.kvs.filter((kv) => kv.lease !== "0").length;
    });
    if (leased >= pools.length) return procs;
    if (Date.now() > deadline) {
      throw new Error(
        `heartbeats did not register: ${procs.map((p) => p.output().slice(-300)).join(" | ")}`,
      );
    }
    await sleep(200);
  }
}

/** What happened to the `health/` keys since a revision, from etcd's own history. */
export interface HealthHistory {
  /** Deletions and status changes away from healthy: the pool dropped out of routing. */
  readonly flaps: string[];
  /** Puts under a different lease than the key's previous one: the heartbeat re-registered. */
  readonly regrants: string[];
  readonly events: number;
}

/** Replays every `health/` event after `fromRev` (a historical watch) and judges it. */
export async function healthHistory(
  client: Etcd3,
  prefix: string,
  fromRev: number,
): Promise<HealthHistory> {
  const flaps: string[] = [];
  const regrants: string[] = [];
  const leaseOf = new Map<string, string>();
  const start = await client.getAll().prefix(`${prefix}health/`).revision(String(fromRev)).exec();
  for (const kv of start.kvs) leaseOf.set(kv.key.toString("utf8"), kv.lease);
  let events = 0;
  let lastEventAt = Date.now();
  const watcher = await client
    .watch()
    .prefix(`${prefix}health/`)
    .startRevision(String(fromRev + 1))
    .create();
  watcher.on("put", (kv) => {
    events += 1;
    lastEventAt = Date.now();
    const key = kv.key.toString("utf8");
    const pool = key.slice(prefix.length);
    let status = "unparsable";
    try {
      status = String((JSON.parse(kv.value.toString("utf8")) as { status?: unknown }).status);
    } catch {
      // stays "unparsable"
    }
    if (status !== "healthy") flaps.push(`${pool} → ${status} at rev ${kv.mod_revision}`);
    const before = leaseOf.get(key);
    if (before !== undefined && before !== kv.lease)
      regrants.push(`${pool} lease ${before} → ${kv.lease} at rev ${kv.mod_revision}`);
    leaseOf.set(key, kv.lease);
  });
  watcher.on("delete", (kv) => {
    events += 1;
    lastEventAt = Date.now();
    flaps.push(`${kv.key.toString("utf8").slice(prefix.length)} deleted at rev ${kv.mod_revision}`);
    leaseOf.delete(kv.key.toString("utf8"));
  });
  // A historical watch delivers the past at once; stop after a quiet second.
  while (Date.now() - lastEventAt < 1_000) await sleep(100);
  await watcher.cancel();
  return { flaps, regrants, events };
}
