import { setTimeout as sleep } from "node:timers/promises";
import { describeMismatch, waitConverged } from "../../../testkit/map-oracle.js";
import { startTcpProxy, type TcpProxy } from "../../../testkit/tcp-proxy.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import {
  expectedMapOf,
  seededCluster,
  startClusterPusher,
  waitSeedPushed,
} from "../support/cluster-world.js";
import {
  type CommittedChange,
  describeSpread,
  kvLatency,
  kvTimeline,
} from "../support/kv-latency.js";
import { ProbeWriter } from "../support/probe-writer.js";

const KV_LIMIT_MS = 10_000;

/**
 * Makes `member` the pusher's member: the client proxies of the others refuse and cut every
 * connection until the pusher has pushed a change it could only have seen through `member`, so
 * its watch and its lease stream sit there. Then the others accept again (the open streams stay).
 */
async function pinPusher(
  proxies: readonly TcpProxy[],
  member: number,
  change: () => Promise<CommittedChange>,
  inKv: (c: CommittedChange) => boolean,
): Promise<boolean> {
  proxies.forEach((p, i) => {
    if (i !== member) p.disconnect();
  });
  const c = await change();
  const deadline = Date.now() + 20_000;
  while (!inKv(c) && Date.now() < deadline) await sleep(100);
  proxies.forEach((p) => {
    p.accept();
  });
  return inKv(c);
}

export const clusterPartition: Scenario = {
  id: 12,
  title: "pusher's etcd member partitioned",
  invariant:
    "3-member etcd; the member the pusher watches (pinned there first) is cut off from its peers (it stays up, with no leader, its watch silent): every change the majority commits is in KV within 10 s",
  budgetMs: (q) => (q ? 90_000 : 240_000),
  async run(ctx) {
    const cuts = ctx.quick ? 2 : 5;
    const inv = new Invariants();
    const world = await seededCluster(ctx, "clpart");
    const { cluster, mc, prefix } = world;
    const proxies: TcpProxy[] = [];
    for (const m of cluster.members) {
      const p = await startTcpProxy(m.clientPort);
      ctx.defer(() => p.close());
      proxies.push(p);
    }
    const endpoints = proxies.map((p) => p.endpoint).join(",");
    const { kv, pusher } = await startClusterPusher(ctx, world, endpoints);
    await waitSeedPushed(kv, world);
    const probe = new ProbeWriter(mc, prefix);
    const cutMembers: string[] = [];
    for (let k = 0; k < cuts; k++) {
      const m = k % 3;
      const pinned = await pinPusher(
        proxies,
        m,
        () => probe.change(`pin ${k} to m${m}`),
        (c) => kvLatency(kvTimeline(kv.writes), c) !== null,
      );
      if (!pinned) throw new Error(`the pusher did not push through m${m} alone`);
      await sleep(1_000);
      const leader = await cluster.leaderIndex();
      cluster.partition(m);
      cutMembers.push(`m${m}${m === leader ? " (leader)" : ""}`);
      const avoid = new Set([m]);
      const cutAt = Date.now();
      await sleep(300);
      const first = await probe.change(`cut ${k}: first`, avoid);
      await sleep(3_000);
      const second = await probe.change(`cut ${k}: second`, avoid);
      // Hold the cut until both are in KV, or past the limit for the later one.
      while (Date.now() - second.at < KV_LIMIT_MS + 500) {
        const t = kvTimeline(kv.writes);
        if (kvLatency(t, first) !== null && kvLatency(t, second) !== null) break;
        await sleep(100);
      }
      cluster.heal(m);
      const healAt = Date.now();
      while (Date.now() - healAt < 15_000 && (await cluster.status(m))?.leaderId === undefined)
        await sleep(100);
      ctx.progress(`${k + 1}/${cuts} cuts (m${m}, held ${secs(healAt - cutAt)})`);
      await sleep(1_500);
    }
    await probe.change("after the cuts");
    await sleep(3_000);
    const timeline = kvTimeline(kv.writes);
    const latencies: number[] = [];
    for (const c of probe.changes) {
      const ms = kvLatency(timeline, c);
      inv.check(
        ms !== null && ms <= KV_LIMIT_MS,
        "change not in KV within 10 s",
        () => `${c.label} rev ${c.rev}: ${ms === null ? "never" : secs(ms)}`,
      );
      if (ms !== null && c.label.startsWith("cut")) latencies.push(ms);
    }
    inv.check(pusher.proc.alive(), "pusher exited", () => pusher.proc.output().slice(-300));
    const expected = await expectedMapOf(mc, prefix);
    inv.check(
      (await waitConverged(() => kv.routes(), expected, 5_000)) !== null,
      "KV ≠ compile(etcd) after the run",
      () => describeMismatch(kv.routes(), expected),
    );
    return {
      runs: cuts,
      figure: `${cuts} partitions of the pusher's member (${cutMembers.join(", ")}); change→KV while cut ${describeSpread(latencies)}`,
      failures: inv.failures(),
      notes: [
        `while cut, each: ${probe.changes
          .filter((c) => c.label.startsWith("cut"))
          .map((c) => {
            const ms = kvLatency(timeline, c);
            return `${c.label} ${ms === null ? "never" : secs(ms)}`;
          })
          .join("; ")}`,
      ],
    };
  },
};
