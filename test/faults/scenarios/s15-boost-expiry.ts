import { setTimeout as sleep } from "node:timers/promises";
import { Invariants, type Scenario, secs } from "../scenario.js";
import { seededCluster, startClusterPusher, waitSeedPushed } from "../support/cluster-world.js";
import { edgectlBinary } from "../support/edgectl.js";

const BOOST_S = 20;
const LEADER_CHANGES = 3;
/** docs/reference.md §2 / issue 10: a boost ends within this of its `expires_at`. */
const END_LIMIT_MS = 2_000;

export const boostExpiry: Scenario = {
  id: 15,
  title: "boost ends at expires_at across leader changes",
  invariant:
    "a 20 s boost on a 3-member etcd whose leader is kill -9'd 3 times (etcd resets lease TTLs on each leader change): the override leaves KV within 2 s of its expires_at",
  budgetMs: (q) => (q ? 90_000 : 150_000),
  async run(ctx) {
    const inv = new Invariants();
    const world = await seededCluster(ctx, "boost");
    const { cluster, mc, prefix, env } = world;
    const { kv, pusher } = await startClusterPusher(ctx, world);
    await waitSeedPushed(kv, world);

    ctx.progress("pusher on the seed state; boosting FR");
    const boosted = await edgectlBinary(
      ctx,
      ["boost", "FR", "--pool", "waw-1", "--ttl", `${BOOST_S}s`, "--reason", "s15"],
      env,
    );
    if (boosted.code !== 0)
      throw new Error(`boost exited ${boosted.code}: ${boosted.stderr.trim()}`);
    const key = `${prefix}override/FR`;
    const value = await mc.any(async (c) => (await c.get(key).string()) ?? "");
    let expiresAt = Number.NaN;
    try {
      expiresAt = Date.parse(String((JSON.parse(value) as { expires_at?: unknown }).expires_at));
    } catch {
      // stays NaN
    }
    inv.check(Number.isFinite(expiresAt), "override carries no expires_at", () =>
      value.slice(0, 200),
    );
    // Without one, measure against the expiry edgectl printed.
    if (!Number.isFinite(expiresAt)) {
      const printed = /expires (\S+)/.exec(boosted.stdout)?.[1];
      expiresAt = printed ? Date.parse(printed) : Date.now() + BOOST_S * 1000;
    }
    const boostedInKv = () => kv.routes()?.countries.FR?.source === "override/FR";
    for (let i = 0; i < 100 && !boostedInKv(); i++) await sleep(100);
    inv.check(boostedInKv(), "the boost never reached KV", () =>
      JSON.stringify(kv.routes()?.countries.FR ?? null),
    );

    // Three leader changes inside the boost's life, each resetting its lease's TTL.
    const changes: string[] = [];
    for (let k = 0; k < LEADER_CHANGES; k++) {
      await sleep(2_500);
      const leader = await cluster.waitLeader();
      await cluster.kill(leader);
      const next = await cluster.waitLeader({ not: leader });
      await cluster.restart(leader);
      changes.push(`m${leader}→m${next} at ${secs(Date.now() - (expiresAt - BOOST_S * 1000))}`);
    }
    ctx.progress(`leader changes: ${changes.join(", ")}`);

    // When did the boost leave KV, and when did etcd drop the key?
    let endedAt: number | null = null;
    let keyGoneAt: number | null = null;
    const watchUntil = expiresAt + (ctx.quick ? END_LIMIT_MS + 1_000 : BOOST_S * 1000 + 5_000);
    while (Date.now() < watchUntil && (endedAt === null || (!ctx.quick && keyGoneAt === null))) {
      if (endedAt === null) {
        const w = kv.writes.find(
          (x) =>
            x.key === "routes" &&
            x.at > expiresAt - BOOST_S * 1000 &&
            !x.value.includes('"source":"override/FR"'),
        );
        if (w) endedAt = w.at;
      }
      if (keyGoneAt === null) {
        const still = await mc
          .any(async (c) => (await c.get(key).string()) !== null)
          .catch(() => true);
        if (!still) keyGoneAt = Date.now();
      }
      await sleep(100);
    }
    const delta = endedAt === null ? null : endedAt - expiresAt;
    inv.check(
      delta !== null && Math.abs(delta) <= END_LIMIT_MS,
      "boost did not end within 2 s of expires_at",
      () =>
        delta === null
          ? `still in KV ${secs(Date.now() - expiresAt)} after expires_at`
          : `${delta > 0 ? "+" : ""}${secs(delta)}`,
    );
    inv.check(pusher.proc.alive(), "pusher exited", () => pusher.proc.output().slice(-300));
    const gone =
      keyGoneAt === null ? `> +${secs(Date.now() - expiresAt)}` : `+${secs(keyGoneAt - expiresAt)}`;
    return {
      runs: LEADER_CHANGES,
      figure: `${BOOST_S} s boost, ${LEADER_CHANGES} leader changes: left KV at expires_at ${delta === null ? "NEVER" : `${delta >= 0 ? "+" : ""}${secs(delta)}`}; etcd dropped the key at expires_at ${gone}`,
      failures: inv.failures(),
      notes: [`leader changes (time since boost): ${changes.join(", ")}`],
    };
  },
};
