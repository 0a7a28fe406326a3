import { setTimeout as sleep } from "node:timers/promises";
import { type CompiledMap, parseMap } from "../../../core/index.js";
import { describeMismatch, matches, waitConverged } from "../../../testkit/map-oracle.js";
import { Invariants, type Scenario, secs } from "../scenario.js";
import { expectedMapOf, seededCluster, startClusterPusher } from "../support/cluster-world.js";
import { kvLatency, kvTimeline } from "../support/kv-latency.js";
import { ProbeWriter } from "../support/probe-writer.js";

/** docs/reference.md §5.6: `/readyz` is 503 once etcd has been unreachable for longer than this. */
const READY_LIMIT_MS = 30_000;
/** How late after the limit `/readyz` may still say 200 (polling and the pusher's own timers). */
const READY_SLACK_MS = 4_000;
const KV_LIMIT_MS = 10_000;

export const quorumLoss: Scenario = {
  id: 13,
  title: "etcd quorum lost, then restored",
  invariant:
    "2 of 3 members down for 60 s (quick: 36 s): the pusher never exits, /livez stays 200, KV keeps the last map, /readyz 503 from 30 s on; after quorum returns the next change is in KV within 10 s and KV = compile(etcd)",
  budgetMs: (q) => (q ? 100_000 : 160_000),
  async run(ctx) {
    const outageMs = ctx.quick ? 36_000 : 60_000;
    const inv = new Invariants();
    const world = await seededCluster(ctx, "quorum");
    const { cluster, mc, prefix } = world;
    const { kv, pusher } = await startClusterPusher(ctx, world);
    const probe = new ProbeWriter(mc, prefix);
    const before = await probe.change("before the outage");
    while (kvLatency(kvTimeline(kv.writes), before) === null && Date.now() - before.at < 30_000)
      await sleep(100);
    const last = kv.routes();
    if (!last || last.rev < before.rev) throw new Error("the pusher never pushed the seed state");
    const ready0 = await pusher.code("/readyz");
    inv.check(ready0 === 200, "/readyz not 200 before the outage", () => `${ready0}`);

    // Quorum lost: two members die, the third stays up without a leader.
    const leader = await cluster.waitLeader();
    const down = [leader, (leader + 1) % 3];
    const lostAt = Date.now();
    await Promise.all(down.map((i) => cluster.kill(i)));
    let first503: number | null = null;
    let samples = 0;
    while (Date.now() - lostAt < outageMs) {
      const t = Date.now() - lostAt;
      const [live, ready] = await Promise.all([pusher.code("/livez"), pusher.code("/readyz")]);
      samples += 1;
      inv.check(pusher.proc.alive(), "pusher exited during the outage", () =>
        pusher.proc.output().slice(-300),
      );
      inv.check(live === 200, "/livez not 200 during the outage", () => `${live} at ${secs(t)}`);
      if (ready === 503 && first503 === null) first503 = t;
      inv.check(
        ready === 503 || t < READY_LIMIT_MS + READY_SLACK_MS,
        "/readyz not 503 after 30 s without quorum",
        () => `${ready} at ${secs(t)}`,
      );
      inv.check(
        ready !== 503 || t >= READY_LIMIT_MS - 2_000,
        "/readyz 503 well before 30 s without quorum",
        () => `at ${secs(t)}`,
      );
      const now = kv.routes();
      inv.check(
        now !== null && now.rev === last.rev && matches(now, last),
        "KV lost the last map during the outage",
        () => (now ? describeMismatch(now, last) : "no routes"),
      );
      await sleep(1_000);
    }
    const routesDuring = kv.writes.filter((w) => w.key === "routes" && w.at >= lostAt);
    for (const w of routesDuring) {
      const m: CompiledMap | null = parseMap(w.value);
      inv.check(
        m !== null && matches(m, last),
        "a different map was written during the outage",
        () => (m ? describeMismatch(m, last) : "unparsable routes"),
      );
    }

    // Quorum returns.
    await Promise.all(down.map((i) => cluster.restart(i, { wait: "listening" })));
    await cluster.waitLeader({ timeoutMs: 30_000 });
    const backAt = Date.now();
    const after = await probe.change("first change after quorum returned");
    let inKv: number | null = null;
    let ready200: number | null = null;
    const lastReady = 0;
    while (Date.now() - backAt < KV_LIMIT_MS + 5_000 && (inKv === null || ready200 === null)) {
      inKv ??= kvLatency(kvTimeline(kv.writes), after);
      if (ready200 === null && (await pusher.code("/readyz")) === 200)
        ready200 = Date.now() - backAt;
      await sleep(100);
    }
    inv.check(
      inKv !== null && inKv <= KV_LIMIT_MS,
      "first change after quorum returned not in KV within 10 s",
      () => (inKv === null ? "never" : secs(inKv)),
    );
    inv.check(
      ready200 !== null,
      "/readyz not 200 again after quorum returned",
      () => `${lastReady}`,
    );
    const expected = await expectedMapOf(mc, prefix);
    inv.check(
      (await waitConverged(() => kv.routes(), expected, 5_000)) !== null,
      "KV ≠ compile(etcd) after quorum returned",
      () => describeMismatch(kv.routes(), expected),
    );
    inv.check(pusher.proc.alive(), "pusher exited", () => pusher.proc.output().slice(-300));
    return {
      runs: samples,
      figure: `quorum lost ${secs(outageMs)}: pusher up, KV kept rev ${last.rev}, /readyz 503 after ${first503 === null ? "NEVER" : secs(first503)}; after quorum returned: change in KV ${inKv === null ? "NEVER" : secs(inKv)}, /readyz 200 after ${ready200 === null ? "NEVER" : secs(ready200)}`,
      failures: inv.failures(),
    };
  },
};
