import { setTimeout as sleep } from "node:timers/promises";
import { seededRandom } from "../../../testkit/kv-standin.js";
import { describeMismatch, waitConverged } from "../../../testkit/map-oracle.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import { judgeApplies } from "../support/apply-history.js";
import {
  expectedMapOf,
  seededCluster,
  startClusterPusher,
  waitSeedPushed,
} from "../support/cluster-world.js";
import { healthHistory, startHeartbeats } from "../support/heartbeats.js";
import {
  type CommittedChange,
  describeSpread,
  kvLatency,
  kvTimeline,
  waitAllInKv,
} from "../support/kv-latency.js";
import { applyLoop, boostLoop, LIVE_POOLS } from "../support/operator-loops.js";
import { ProbeWriter } from "../support/probe-writer.js";

/** docs/reference.md §5.8: a change committed by the majority reaches KV within this. */
const KV_LIMIT_MS = 10_000;

export const clusterKills: Scenario = {
  id: 11,
  title: "etcd member and leader kill -9",
  invariant:
    "3-member etcd, members and the leader kill -9'd in turn during applies, boosts and heartbeats (every endpoint listed): 0 lost or misreported applies or boosts, 0 heartbeat flaps or lost leases, every change in KV within 10 s",
  budgetMs: (q) => (q ? 120_000 : 300_000),
  async run(ctx) {
    const kills = ctx.quick ? 4 : 10;
    const r = seededRandom(ctx.seed);
    const inv = new Invariants();
    const world = await seededCluster(ctx, "clkill");
    const { cluster, mc, prefix, env } = world;
    const { kv, pusher } = await startClusterPusher(ctx, world);
    await startHeartbeats(ctx, env, mc, prefix, LIVE_POOLS, ["--ttl", "10", "--interval", "2"]);
    await waitSeedPushed(kv, world);
    const startRev = await mc.any(async (c) =>
      Number((await c.get(`${prefix}epoch`).exec()).header.revision),
    );

    let killing = true;
    const applies = applyLoop(ctx, env, () => !killing);
    const boosts = boostLoop(ctx, env, mc, prefix, () => !killing);
    const probe = new ProbeWriter(mc, prefix);
    const leaderKills: { at: number; change: CommittedChange; electedAt: number }[] = [];
    let pusherDown = 0;
    for (let k = 0; k < kills; k++) {
      const leader = await cluster.waitLeader();
      const victim = k % 2 === 0 ? leader : (leader + 1 + Math.floor(r() * 2)) % 3;
      const at = Date.now();
      await cluster.kill(victim);
      if (victim === leader) {
        // The next change after the leader died: commits once a new leader is elected.
        // The election alone, measured beside it, tells etcd's share of that time from the pusher's.
        const elected = cluster.waitLeader({ not: victim }).then(() => Date.now());
        const change = await probe.change(`after leader kill ${k}`);
        leaderKills.push({ at, change, electedAt: await elected });
      } else {
        await probe.change(`member ${victim} down`);
      }
      await sleep((ctx.quick ? 800 : 1_000) + Math.floor(r() * (ctx.quick ? 1_000 : 2_000)));
      await probe.change(`member ${victim} still down`);
      await cluster.restart(victim);
      await cluster.waitLeader();
      await sleep(ctx.quick ? 1_000 : 1_500);
      if (!pusher.proc.alive()) pusherDown += 1;
      ctx.progress(
        `${k + 1}/${kills} kills (${victim === leader ? "leader" : "follower"} m${victim})`,
      );
    }
    killing = false;
    const [{ attempts: applied, exitedAt }, boosted] = await Promise.all([applies, boosts]);
    await probe.change("after the kills");
    const appliedChanges = applied.flatMap((a) =>
      a.code === 0 && a.revision !== null
        ? [{ label: a.marker, rev: a.revision, at: exitedAt.get(a.marker) ?? Date.now() }]
        : [],
    );
    const changes: CommittedChange[] = [
      ...appliedChanges,
      ...boosted.flatMap((b) => (b.change ? [b.change] : [])),
      ...probe.changes,
    ];
    await waitAllInKv(() => kvTimeline(kv.writes), changes, KV_LIMIT_MS + 500);

    // Applies: judged from etcd's history, not from what edgectl said.
    const client = await mc.any(async (c) => {
      await c.get(`${prefix}epoch`).exec();
      return c;
    });
    const verdict = await judgeApplies(client, prefix, startRev, applied, `${prefix}pool/fra-1`);
    for (const v of verdict.violations) inv.check(false, "apply lost or misreported", () => v);
    for (const a of applied.filter((x) => x.code !== 0)) {
      inv.check(
        false,
        "apply failed while a majority was up",
        () => `${a.marker} exit ${a.code}: ${a.stderr.trim().split("\n")[0] ?? ""}`,
      );
    }
    for (const b of boosted) {
      inv.check(
        b.code !== 0 || b.written,
        "boost said 0 but override is not in etcd",
        () => b.marker,
      );
      inv.check(
        b.code === 0 || !b.written,
        "boost failed but its override is in etcd",
        () => `${b.marker} exit ${b.code}`,
      );
      inv.check(
        b.code === 0,
        "boost failed while a majority was up",
        () => `${b.marker} exit ${b.code}: ${b.stderr.trim().split("\n")[0] ?? ""}`,
      );
    }
    const health = await healthHistory(client, prefix, startRev);
    for (const f of health.flaps) inv.check(false, "heartbeat flap (pool left routing)", () => f);
    for (const g of health.regrants)
      inv.check(false, "heartbeat lost its lease (re-granted)", () => g);
    inv.check(pusher.proc.alive() && pusherDown === 0, "pusher exited", () =>
      pusher.proc.output().slice(-300),
    );

    // Every change reached KV within 10 s of its commit.
    const timeline = kvTimeline(kv.writes);
    const latencies: number[] = [];
    for (const c of changes) {
      const ms = kvLatency(timeline, c);
      inv.check(
        ms !== null && ms <= KV_LIMIT_MS,
        "change not in KV within 10 s",
        () => `${c.label} rev ${c.rev}: ${ms === null ? "never" : secs(ms)}`,
      );
      if (ms !== null) latencies.push(ms);
    }
    const fromKill = leaderKills
      .map((l) => kvLatency(timeline, l.change, l.at))
      .filter((x): x is number => x !== null);
    const expected = await expectedMapOf(mc, prefix);
    inv.check(
      (await waitConverged(() => kv.routes(), expected, 5_000)) !== null,
      "KV ≠ compile(etcd) after the run",
      () => describeMismatch(kv.routes(), expected),
    );
    const codes = (xs: readonly { code: number }[]) =>
      [...new Set(xs.map((x) => x.code))]
        .sort()
        .map((c) => `${c}:${xs.filter((x) => x.code === c).length}`)
        .join(" ");
    return {
      runs: kills,
      figure: `${kills} kill -9 (${leaderKills.length} leaders), ${applied.length} applies (exit ${codes(applied)}), ${boosted.length} boosts (exit ${codes(boosted)}), heartbeat flaps ${health.flaps.length}, re-grants ${health.regrants.length}; change→KV ${describeSpread(latencies)}; leader kill→next change in KV ${describeSpread(fromKill)} (new leader after ${describeSpread(leaderKills.map((l) => l.electedAt - l.at))})`,
      failures: inv.failures(),
      notes: [
        `leader kill → next change in KV (→ new leader, → change committed), each: ${leaderKills
          .map((l) => {
            const ms = kvLatency(timeline, l.change, l.at);
            return `${ms === null ? "never" : secs(ms)} (${secs(l.electedAt - l.at)}, ${secs(l.change.at - l.at)})`;
          })
          .join(", ")}`,
      ],
    };
  },
};
