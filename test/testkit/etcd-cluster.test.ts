import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EtcdCluster, startEtcdCluster } from "../../testkit/etcd-cluster.js";

let cluster: EtcdCluster;
const K = "/edge-test/cluster-helper/";

beforeAll(async () => {
  cluster = await startEtcdCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.stop();
});

async function until<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const v = await probe();
    if (v !== undefined) return v;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const get = async (key: string, member: number, ...flags: string[]) =>
  (await cluster.ctl([...flags, "get", key, "--print-value-only"], member)).trim();

describe("a 3-member etcd cluster on loopback", () => {
  it("starts three members with distinct ids that agree on one leader and replicate writes", async () => {
    expect(cluster.endpoints).toHaveLength(3);
    expect(new Set(cluster.memberIds).size).toBe(3);
    const list = await cluster.ctl(["member", "list"]);
    for (const id of cluster.memberIds) expect(list).toContain(id);
    // Members advertise their peer proxy, so partitions can be cut there.
    for (const p of cluster.peerProxies) expect(list).toContain(p.endpoint);
    const leader = await cluster.waitLeader();
    const statuses = await Promise.all([0, 1, 2].map((i) => cluster.status(i)));
    for (const s of statuses) expect(s?.leaderId).toBe(cluster.memberIds[leader]);
    await cluster.ctl(["put", `${K}a`, "1"], 0);
    for (const i of [0, 1, 2]) expect(await get(`${K}a`, i)).toBe("1");
  });

  it("elects another leader after the leader is SIGKILLed, and the restarted member catches up", async () => {
    const old = await cluster.waitLeader();
    await cluster.kill(old);
    expect(cluster.members[old]?.running).toBe(false);
    const next = await cluster.waitLeader({ not: old });
    expect(next).not.toBe(old);
    await cluster.ctl(["put", `${K}b`, "after-kill"]);
    await cluster.restart(old);
    expect(await get(`${K}b`, old)).toBe("after-kill");
  });

  it("cuts a partitioned follower off: no leader and timed-out linearizable reads there, the others carry on at the same term", async () => {
    const leader = await cluster.waitLeader();
    const cut = [0, 1, 2].find((i) => i !== leader) as number;
    const termBefore = (await cluster.status(leader))?.raftTerm;
    await cluster.ctl(["put", `${K}c`, "before"], leader);
    cluster.partition(cut);
    const noLeader = await until("the cut member to lose its leader", async () => {
      const s = await cluster.status(cut);
      return s && s.leaderId === undefined ? s : undefined;
    });
    expect(noLeader.errors).toContain("etcdserver: no leader");
    // Linearizable reads need the leader: they time out. Serializable ones answer from local state.
    await expect(get(`${K}c`, cut, "--command-timeout=2s")).rejects.toThrow(/deadline|timed out/);
    expect(await get(`${K}c`, cut, "--consistency=s")).toBe("before");
    await cluster.ctl(["put", `${K}c`, "during"], leader);
    const majority = [0, 1, 2].filter((i) => i !== cut);
    for (const i of majority) {
      expect(await get(`${K}c`, i)).toBe("during");
      expect((await cluster.status(i))?.raftTerm).toBe(termBefore);
    }
    // Pre-vote: the cut member never raised its term either.
    expect((await cluster.status(cut))?.raftTerm).toBe(termBefore);
    cluster.heal(cut);
    await until("the healed member to follow the leader again", async () => {
      const s = await cluster.status(cut);
      return s?.leaderId === cluster.memberIds[leader] ? true : undefined;
    });
    expect(await get(`${K}c`, cut)).toBe("during");
    expect((await cluster.status(leader))?.raftTerm).toBe(termBefore);
  });

  it("moves leadership to the majority when the leader itself is partitioned, and heals", async () => {
    const old = await cluster.waitLeader();
    cluster.partition(old);
    const next = await cluster.waitLeader({ not: old });
    await until("the cut leader to step down", async () =>
      (await cluster.status(old))?.leaderId === undefined ? true : undefined,
    );
    await cluster.ctl(["put", `${K}d`, "new-leader"], next);
    cluster.heal(old);
    await until("the old leader to rejoin", async () =>
      (await cluster.status(old))?.leaderId === cluster.memberIds[next] ? true : undefined,
    );
    expect(await get(`${K}d`, old)).toBe("new-leader");
  });

  it("restores every member from a snapshot into a new history at the snapshot's lower revision, under the same cluster id (another with a new token)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "edge-snap-"));
    try {
      const clusterId = (await cluster.status(0))?.clusterId;
      await cluster.ctl(["put", `${K}e`, "in-snapshot"]);
      const path = join(dir, "snap.db");
      await cluster.snapshotSave(path);
      const savedRev = (await cluster.status(0))?.revision ?? 0;
      await cluster.ctl(["put", `${K}e`, "after-snapshot"]);
      await cluster.ctl(["put", `${K}f`, "gone-after-restore"]);
      const before = (await cluster.status(0))?.revision ?? 0;
      expect(before).toBe(savedRev + 2);
      await cluster.restoreFromSnapshot(path);
      await cluster.waitLeader();
      for (const i of [0, 1, 2]) {
        expect((await cluster.status(i))?.revision).toBe(savedRev);
        expect(await get(`${K}e`, i)).toBe("in-snapshot");
        expect(await get(`${K}f`, i)).toBe("");
        expect((await cluster.status(i))?.clusterId).toBe(clusterId);
      }
      // What the pusher tells a replaced etcd by: another cluster id.
      await cluster.restoreFromSnapshot(path, { newToken: true });
      await cluster.waitLeader();
      const other = (await cluster.status(0))?.clusterId;
      expect(other).not.toBe(clusterId);
      for (const i of [1, 2]) expect((await cluster.status(i))?.clusterId).toBe(other);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
