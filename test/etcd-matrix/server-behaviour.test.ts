import { once } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3, GRPCOutOfRangeError } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { type EtcdCluster, startEtcdCluster } from "../../testkit/etcd-cluster.js";

/**
 * The etcd server behaviours the pusher and edgectl depend on, asserted on whichever etcd the run
 * uses (ETCD_BIN; `npm run test:etcd-matrix` runs this file on every version of the matrix).
 * docs/reliability.md "etcd versions" says which of them differ between versions.
 */
const P = "/edge-test/server-behaviour/";
const end = (prefix: string) => {
  const b = Buffer.from(prefix);
  const e = Buffer.from(b);
  e[e.length - 1] = (e[e.length - 1] ?? 0) + 1;
  return e;
};

describe("one etcd member", () => {
  let etcd: EtcdServer;
  let client: Etcd3;
  beforeAll(async () => {
    etcd = await startEtcd();
    client = new Etcd3({ hosts: etcd.endpoint });
  }, 60_000);
  afterAll(async () => {
    client?.close();
    await etcd?.stop();
  });

  it("filters a range by min_mod_revision, limits what it returns, and counts every key of the range (the delta read)", async () => {
    const prefix = `${P}delta/`;
    for (const k of ["a", "b", "c", "d", "e"]) await client.put(`${prefix}${k}`).value("1");
    const since = Number((await client.put(`${prefix}a`).value("1")).header.revision);
    for (const k of ["b", "c", "d"]) await client.put(`${prefix}${k}`).value("2");
    const range = (limit: number) =>
      client.kv.range({
        key: Buffer.from(prefix),
        range_end: end(prefix),
        min_mod_revision: String(since + 1),
        limit: String(limit),
      });
    const two = await range(2);
    expect(two.kvs.map((kv) => kv.key.toString())).toEqual([`${prefix}b`, `${prefix}c`]);
    expect(two.more).toBe(true);
    // `count` is the whole range's, not the filtered keys': PrefixMirror checks deletions by it.
    expect(Number(two.count)).toBe(5);
    const three = await range(3);
    expect(three.kvs).toHaveLength(3);
    expect(three.more).toBe(false);
    expect(Number(three.count)).toBe(5);
  });

  it("answers a read at a compacted revision with OutOfRange (paged reads start over on it)", async () => {
    const old = Number((await client.put(`${P}compact/a`).value("1")).header.revision);
    const now = Number((await client.put(`${P}compact/a`).value("2")).header.revision);
    await client.kv.compact({ revision: String(now), physical: true });
    await expect(
      client.kv.range({
        key: Buffer.from(`${P}compact/`),
        range_end: end(`${P}compact/`),
        revision: String(old),
      }),
    ).rejects.toBeInstanceOf(GRPCOutOfRangeError);
  });

  it("cancels a watch from a compacted revision, which etcd3 reports as an error (the pusher re-reads)", async () => {
    const old = Number((await client.put(`${P}watch/a`).value("1")).header.revision);
    const now = Number((await client.put(`${P}watch/a`).value("2")).header.revision);
    await client.kv.compact({ revision: String(now), physical: true });
    const watcher = await client.watch().prefix(`${P}watch/`).startRevision(String(old)).create();
    const events: unknown[] = [];
    watcher.on("data", (d) => events.push(d));
    const [error] = (await Promise.race([
      once(watcher, "error"),
      sleep(10_000).then(() => [undefined]),
    ])) as [Error | undefined];
    expect(error).toBeInstanceOf(Error);
    expect(events.filter((e) => (e as { events: unknown[] }).events.length > 0)).toEqual([]);
  });
});

describe("a 3-member cluster", () => {
  let cluster: EtcdCluster;
  beforeAll(async () => {
    cluster = await startEtcdCluster();
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it("keeps a lease across a leader change, its TTL either renewed in full or checkpointed (never shorter)", async () => {
    const client = new Etcd3({ hosts: [...cluster.endpoints] });
    try {
      const TTL = 10;
      const lease = client.lease(TTL, { autoKeepAlive: false });
      await lease.put(`${P}lease/k`).value("held");
      const granted = Date.now();
      await sleep(4_000);
      const old = await cluster.waitLeader();
      await cluster.kill(old);
      await cluster.waitLeader({ not: old });
      const left = await client.leaseClient.leaseTimeToLive({ ID: await lease.grant() });
      const elapsed = (Date.now() - granted) / 1000;
      // Without lease checkpointing (etcd's default on every version here) the new leader grants
      // the whole TTL again; with it, what was left. Either way the lease and its key survive.
      expect(Number(left.TTL)).toBeGreaterThanOrEqual(Math.floor(TTL - elapsed) - 1);
      expect(Number(left.TTL)).toBeLessThanOrEqual(TTL);
      expect((await client.get(`${P}lease/k`).string()) ?? null).toBe("held");
      await cluster.restart(old);
    } finally {
      client.close();
    }
  });
});
