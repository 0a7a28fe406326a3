import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { CompiledMap } from "../../core/index.js";
import { startStatusServer } from "../../pusher/http-server.js";
import { type EtcdCluster, startEtcdCluster } from "../../testkit/etcd-cluster.js";
import { startTcpProxy, type TcpProxy } from "../../testkit/tcp-proxy.js";
import { MemoryKv } from "../helpers/memory-kv.js";
import {
  type Cleanup,
  kvConverged,
  kvRoutes,
  type PusherUnderTest,
  type StartPusherOptions,
  seedRouting,
  startPusher,
  uniqueNames,
  waitFor,
} from "./harness.js";

/** docs/reference.md §5.8: a change committed by the majority reaches KV within this. */
const KV_LIMIT_MS = 10_000;

let cluster: EtcdCluster;
/** One client proxy per member, so a test can pin the pusher's streams to one member. */
const proxies: TcpProxy[] = [];
const cleanups: Cleanup[] = [];

beforeAll(async () => {
  cluster = await startEtcdCluster();
  for (const m of cluster.members) proxies.push(await startTcpProxy(m.clientPort));
}, 60_000);

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  for (const p of proxies) p.accept();
  for (let i = 0; i < cluster.size; i++) {
    cluster.heal(i);
    if (!cluster.members[i]?.running) await cluster.restart(i);
  }
  await cluster.waitLeader();
});

afterAll(async () => {
  for (const p of proxies) await p.close();
  await cluster?.stop();
});

/** A client on the members not in `avoid` (the majority's side of a fault). */
function majority(avoid: readonly number[] = []): Etcd3 {
  const hosts = cluster.endpoints.filter((_, i) => !avoid.includes(i));
  const c = new Etcd3({ hosts: [...hosts] });
  cleanups.push(() => c.close());
  return c;
}

function pusherOn(o: Omit<StartPusherOptions, "endpoint">): PusherUnderTest {
  const p = startPusher({ endpoint: proxies.map((x) => x.endpoint).join(","), ...o });
  cleanups.push(() => p.stop());
  return p;
}

async function put(client: Etcd3, key: string, value: unknown): Promise<number> {
  const res = await client.put(key).value(JSON.stringify(value)).exec();
  return Number(res.header.revision);
}

/** Commits a change through `client` and resolves how long KV took to route by it. */
async function changeReachesKv(
  client: Etcd3,
  kv: MemoryKv,
  prefix: string,
  pool: string,
): Promise<{ ms: number; map: CompiledMap }> {
  const rev = await put(client, `${prefix}country/FR`, { primary: pool, fallbacks: [] });
  const at = Date.now();
  const map = await kvConverged(client, kv, prefix, rev, KV_LIMIT_MS);
  expect(map.countries.FR?.pool).toBe(pool);
  return { ms: Date.now() - at, map };
}

/**
 * Pins the pusher's connections to member `m`: the other members' client proxies refuse and cut
 * every connection until a change made meanwhile is in KV (it could only come through `m`).
 */
async function pinTo(m: number, p: PusherUnderTest, client: Etcd3, prefix: string) {
  proxies.forEach((x, i) => {
    if (i !== m) x.disconnect();
  });
  await changeReachesKv(client, p.kv, prefix, "par-1");
  for (const x of proxies) x.accept();
}

const restarts = async (p: PusherUnderTest) => {
  const text = await p.pusher.metrics.registry.getSingleMetricAsString(
    "edge_pusher_watch_restarts_total",
  );
  return [...text.matchAll(/^edge_pusher_watch_restarts_total\{[^}]*\} (\d+)$/gm)].reduce(
    (n, m) => n + Number(m[1]),
    0,
  );
};

describe("pusher on a 3-member etcd cluster", () => {
  it("leaves a member cut off from its peers (its watch silent): the majority's changes reach KV within 10 s", async () => {
    const { prefix, electionKey } = uniqueNames();
    const setup = majority();
    await seedRouting(setup, prefix);
    const p = pusherOn({ prefix, electionKey, electionTtl: 10 });
    await kvConverged(setup, p.kv, prefix);
    const m = 0;
    await pinTo(m, p, setup, prefix);
    const before = await restarts(p);
    cluster.partition(m);
    const others = majority([m]);
    const first = await changeReachesKv(others, p.kv, prefix, "fra-1");
    const second = await changeReachesKv(others, p.kv, prefix, "ams-1");
    // The watch stuck on the cut member was given up and started elsewhere.
    await waitFor("watch restarted", async () => (await restarts(p)) > before, KV_LIMIT_MS);
    const third = await changeReachesKv(others, p.kv, prefix, "par-1");
    console.info(`partition: change→KV ${first.ms} ms, ${second.ms} ms, ${third.ms} ms`);
  });

  it("keeps changes flowing when a follower and then the leader are killed", async () => {
    const { prefix, electionKey } = uniqueNames();
    const setup = majority();
    await seedRouting(setup, prefix);
    const p = pusherOn({ prefix, electionKey, electionTtl: 10 });
    await kvConverged(setup, p.kv, prefix);
    const leader = await cluster.waitLeader();
    const follower = (leader + 1) % cluster.size;
    await cluster.kill(follower);
    const afterFollower = await changeReachesKv(majority([follower]), p.kv, prefix, "fra-1");
    await cluster.restart(follower);
    await cluster.kill(leader);
    const afterLeader = await changeReachesKv(majority([leader]), p.kv, prefix, "ams-1");
    expect(p.pusher.status.role).toBe("leader");
    console.info(`kills: follower ${afterFollower.ms} ms, leader ${afterLeader.ms} ms`);
  });

  it("survives quorum loss: stays up, keeps the last map, /readyz 503 after the limit, /livez 200, caught up after", async () => {
    const { prefix, electionKey } = uniqueNames();
    const setup = majority();
    await seedRouting(setup, prefix);
    // The default TTL: a lease given up during the outage must not hold the next campaign back
    // (etcd extends it by a whole TTL when quorum returns).
    const ttl = 10;
    const p = pusherOn({
      prefix,
      electionKey,
      electionTtl: ttl,
      tuning: { unhealthyAfterMs: 3_000 },
    });
    const server = await startStatusServer({
      host: "127.0.0.1",
      port: 0,
      status: p.pusher.status,
      metrics: p.pusher.metrics,
    });
    cleanups.push(() => server.close());
    const get = (path: string) => fetch(`http://127.0.0.1:${server.port}${path}`);
    const last = await kvConverged(setup, p.kv, prefix);
    expect((await get("/readyz")).status).toBe(200);
    await cluster.kill(1);
    await cluster.kill(2);
    const lostAt = Date.now();
    const livez: number[] = [];
    let readyz503At: number | null = null;
    // Longer than 2×TTL: the election lease is given up, as in a real outage of a minute.
    while (Date.now() - lostAt < (2 * ttl + 3) * 1000) {
      livez.push((await get("/livez")).status);
      const r = await get("/readyz");
      if (r.status === 503 && readyz503At === null) {
        readyz503At = Date.now();
        expect(((await r.json()) as { reasons: string[] }).reasons).toContain("etcd unreachable");
        expect((await get("/healthz")).status).toBe(503);
      }
      await sleep(250);
    }
    expect(livez.every((s) => s === 200)).toBe(true);
    expect(readyz503At).not.toBeNull();
    expect((readyz503At ?? 0) - lostAt).toBeGreaterThanOrEqual(3_000);
    expect((await kvRoutes(p.kv))?.rev).toBe(last.rev);
    await Promise.all([cluster.restart(1), cluster.restart(2)]);
    const back = await changeReachesKv(majority(), p.kv, prefix, "fra-1");
    await waitFor("ready again", async () => (await get("/readyz")).status === 200);
    console.info(`quorum back: change→KV ${back.ms} ms`);
  }, 120_000);

  it("follows an etcd restored from a snapshot, leader and standby alike, as history + 1", async () => {
    const { prefix, electionKey } = uniqueNames();
    const setup = majority();
    await seedRouting(setup, prefix);
    const kv = new MemoryKv();
    const leader = pusherOn({ prefix, electionKey, kv, id: "restore-leader" });
    await waitFor("leader", () => leader.pusher.status.role === "leader");
    const standby = pusherOn({ prefix, electionKey, kv, id: "restore-standby" });
    await kvConverged(setup, kv, prefix);
    const path = `${cluster.members[0]?.dataDir}-snapshot.db`;
    await cluster.snapshotSave(path);
    // Changes after the snapshot: the restored etcd goes back before them.
    let rev = 0;
    for (const pool of ["fra-1", "par-1", "fra-1"]) {
      rev = await put(setup, `${prefix}country/DE`, { primary: pool, fallbacks: [] });
    }
    await kvConverged(setup, kv, prefix, rev);
    // At or past `rev`: a lease of an earlier test's pusher may expire meanwhile and move the revision.
    await waitFor("standby compiled", () => (standby.pusher.status.etcdRevision ?? 0) >= rev);
    await cluster.restoreFromSnapshot(path);
    const restoredAt = Date.now();
    const after = majority();
    const map = await waitFor(
      "KV on the restored state, history 1",
      async () => {
        const m = await kvRoutes(kv);
        return m && m.history === 1 && m.rev < rev ? m : null;
      },
      KV_LIMIT_MS,
    );
    expect(map.countries.DE?.pool).toBe("fra-1");
    await waitFor("standby on history 1", () => standby.pusher.status.history === 1, KV_LIMIT_MS);
    console.info(`restore: leader and standby on history 1 after ${Date.now() - restoredAt} ms`);
    // The new history's own changes follow, below the old history's revisions.
    const next = await changeReachesKv(after, kv, prefix, "ams-1");
    expect(next.map.history).toBe(1);
    expect(leader.pusher.status.document()).toMatchObject({ history: 1, role: "leader" });
    const resets = await leader.pusher.metrics.registry.getSingleMetricAsString(
      "edge_pusher_kv_history_resets_total",
    );
    expect(resets).toMatch(/edge_pusher_kv_history_resets_total 1\b/);
    expect(
      await standby.pusher.metrics.registry.getSingleMetricAsString("edge_pusher_history"),
    ).toMatch(/edge_pusher_history 1\b/);
    // The standby takes over in the same history, never writing the old one's.
    await leader.crash();
    await waitFor("standby leads", () => standby.pusher.status.role === "leader", 30_000);
    const taken = await changeReachesKv(after, kv, prefix, "par-1");
    expect(taken.map.history).toBe(1);

    // Restored again as a new cluster (new token, so a new cluster id): history 2.
    const clusterBefore = (await cluster.status(0))?.clusterId;
    await cluster.restoreFromSnapshot(path, { newToken: true });
    expect((await cluster.status(0))?.clusterId).not.toBe(clusterBefore);
    const again = await waitFor(
      "KV on history 2",
      async () => {
        const m = await kvRoutes(kv);
        return m && m.history === 2 ? m : null;
      },
      KV_LIMIT_MS,
    );
    expect(again.countries.DE?.pool).toBe("fra-1");
  }, 120_000);
});
