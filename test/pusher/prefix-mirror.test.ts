import { mkdirSync, rmSync } from "node:fs";
import { createConnection, createServer, type Socket } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import { describe, expect, it } from "vitest";
import { readPrefix } from "../../adapters/prefix-read.js";
import { decodeSnapshot } from "../../core/index.js";
import { createEtcdClient } from "../../pusher/etcd-client.js";
import { PrefixMirror } from "../../pusher/prefix-mirror.js";
import { startEtcd } from "../../testkit/etcd.js";
import { uniqueNames, useEtcd } from "./harness.js";

const ctx = useEtcd();

const rule = (primary: string) => JSON.stringify({ primary, fallbacks: [] });

/** The mirror's state must be exactly what a fresh full read of etcd decodes to. */
async function expectExact(mirror: PrefixMirror, prefix: string): Promise<void> {
  const fresh = decodeSnapshot(await readPrefix(ctx.client, prefix), prefix);
  const state = mirror.index.state();
  expect([...state.countries]).toEqual([...fresh.countries]);
  expect([...state.pools].sort()).toEqual([...fresh.pools].sort());
  expect([...state.health].sort()).toEqual([...fresh.health].sort());
  expect(state.epoch).toBe(fresh.epoch);
  expect(new Set(state.problems.map((p) => `${p.key} ${p.code}`))).toEqual(
    new Set(fresh.problems.map((p) => `${p.key} ${p.code}`)),
  );
}

/** A watch on the prefix that tells the mirror of every delete event, as the pusher's does. */
async function watchDeletes(prefix: string, mirror: PrefixMirror) {
  const watcher = await ctx.client.watch().prefix(prefix).create();
  const seen: number[] = [];
  watcher.on("delete", (kv) => {
    mirror.noteDeleted(kv.key.toString(), Number(kv.mod_revision));
    seen.push(Number(kv.mod_revision));
  });
  return {
    /** Resolves once the watch has delivered a delete at `revision` or later. */
    async upTo(revision: number) {
      for (let i = 0; i < 200 && !seen.some((r) => r >= revision); i++) await sleep(10);
    },
    cancel: () => watcher.cancel(),
  };
}

/**
 * A loopback TCP forwarder whose target can be switched: one client address that reaches one
 * etcd, then another (as a DNS name or load balancer moved to a replaced cluster).
 */
async function switchableProxy(targetPort: number) {
  let target = targetPort;
  const sockets = new Set<Socket>();
  const server = createServer((down) => {
    const up = createConnection({ host: "127.0.0.1", port: target });
    for (const s of [down, up]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => {});
    }
    down.pipe(up).pipe(down);
    down.on("close", () => up.destroy());
    up.on("close", () => down.destroy());
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    /** Sends new connections to `port` and drops the open ones (the client reconnects). */
    switchTo(next: number) {
      target = next;
      for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}

/** `mirror.read()`, retried while the client reconnects to a restarted or moved etcd. */
async function readAfterReconnect(mirror: PrefixMirror) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await mirror.read();
    } catch (e) {
      if (attempt >= 50) throw e;
      await sleep(200);
    }
  }
}

describe("PrefixMirror: reads only what changed, proven complete (real etcd, docs/reference.md §5.3/§5.9)", () => {
  it("brings puts and watched deletes in with one filtered range, exactly as a full read", async () => {
    const { prefix } = uniqueNames();
    const c = ctx.client;
    for (const cc of ["DE", "FR", "_default"])
      await c.put(`${prefix}country/${cc}`).value(rule("fra-1"));
    await c.put(`${prefix}pool/fra-1`).value('{"origin":"https://fra.example.com"}');
    await c.put(`${prefix}health/fra-1`).value('{"status":"healthy"}');
    const mirror = new PrefixMirror(c, prefix);
    const watch = await watchDeletes(prefix, mirror);
    try {
      const first = await mirror.read();
      expect(first).toMatchObject({ kind: "full", reason: "first", count: 5 });
      await c.put(`${prefix}country/DE`).value(rule("ams-1"));
      await c.put(`${prefix}junk/new`).value("x");
      await c.delete().key(`${prefix}health/fra-1`);
      // Created and deleted between two reads: never held, so never counted.
      await c.put(`${prefix}country/GB`).value(rule("fra-1"));
      const gone = await c.delete().key(`${prefix}country/GB`);
      // Deleted, then created again: a put, not a delete.
      await c.delete().key(`${prefix}country/FR`);
      await c.put(`${prefix}country/FR`).value(rule("par-1"));
      await watch.upTo(Number(gone.header.revision));
      const delta = await mirror.read();
      expect(delta).toMatchObject({ kind: "delta", reason: null, count: 5, pages: 1 });
      expect(delta.changed).toBe(4);
      await expectExact(mirror, prefix);
      expect(mirror.index.state().countries.get("FR")?.primary).toBe("par-1");
      expect(mirror.index.state().health.has("fra-1")).toBe(false);
      // Nothing changed: the same, from an empty delta.
      expect(await mirror.read()).toMatchObject({ kind: "delta", changed: 0, count: 5 });
    } finally {
      await watch.cancel();
    }
  });

  it("reads everything when a deletion it was not told of leaves the count short", async () => {
    const { prefix } = uniqueNames();
    const c = ctx.client;
    await c.put(`${prefix}country/_default`).value(rule("fra-1"));
    await c.put(`${prefix}country/DE`).value(rule("fra-1"));
    const mirror = new PrefixMirror(c, prefix);
    await mirror.read();
    // No watch: the delete event is lost, as after a dropped stream.
    await c.delete().key(`${prefix}country/DE`);
    await c.put(`${prefix}country/FR`).value(rule("fra-1"));
    const read = await mirror.read();
    expect(read).toMatchObject({ kind: "full", reason: "unproven-deletes", count: 2 });
    await expectExact(mirror, prefix);
    expect(mirror.index.state().countries.has("DE")).toBe(false);
  });

  it("does not take a delete event newer than the read, and keeps it for the next read", async () => {
    const { prefix } = uniqueNames();
    const c = ctx.client;
    await c.put(`${prefix}country/_default`).value(rule("fra-1"));
    await c.put(`${prefix}country/DE`).value(rule("fra-1"));
    const mirror = new PrefixMirror(c, prefix);
    const first = await mirror.read();
    // An event from after the next read's revision (as one arriving while that read is served).
    mirror.noteDeleted(`${prefix}country/DE`, first.revision + 1_000);
    const read = await mirror.read();
    expect(read).toMatchObject({ kind: "delta", changed: 0 });
    expect(mirror.index.state().countries.has("DE")).toBe(true);
  });

  it("reads everything when more keys changed than one delta may carry, or when asked", async () => {
    const { prefix } = uniqueNames();
    const c = ctx.client;
    await c.put(`${prefix}country/_default`).value(rule("fra-1"));
    const mirror = new PrefixMirror(c, prefix, { deltaKeys: 3 });
    await mirror.read();
    for (const cc of ["DE", "FR", "GB", "IT"])
      await c.put(`${prefix}country/${cc}`).value(rule("fra-1"));
    expect(await mirror.read()).toMatchObject({
      kind: "full",
      reason: "too-many-changes",
      count: 5,
    });
    await expectExact(mirror, prefix);
    await c.put(`${prefix}country/ES`).value(rule("fra-1"));
    expect(await mirror.read()).toMatchObject({ kind: "delta", changed: 1 });
    expect(await mirror.read(true)).toMatchObject({ kind: "full", reason: "asked" });
  });

  it("reads everything, page by page, when the changed values do not fit one gRPC message", async () => {
    const { prefix } = uniqueNames();
    // The pusher's client, its 64 MiB receive limit cut to 1 MiB: two values show the same path.
    const small = createEtcdClient(
      { endpoints: [ctx.etcd.endpoint] },
      { grpcOptions: { "grpc.max_receive_message_length": 1024 * 1024 } },
    );
    try {
      const c = ctx.client;
      await c.put(`${prefix}country/_default`).value(rule("fra-1"));
      const mirror = new PrefixMirror(small, prefix, { paging: { pageBytes: 256 * 1024 } });
      await mirror.read();
      // Each 700 KB value is invalid (over 64 KiB) but under etcd's 1.5 MiB request limit.
      for (const pool of ["big-1", "big-2"])
        await c.put(`${prefix}health/${pool}`).value("x".repeat(700_000));
      await c.put(`${prefix}country/DE`).value(rule("ams-1"));
      const read = await mirror.read();
      expect(read).toMatchObject({ kind: "full", reason: "too-many-changes", count: 4 });
      expect(mirror.index.state().countries.get("DE")?.primary).toBe("ams-1");
      await expectExact(mirror, prefix);
      // The next small change is a delta again.
      await c.put(`${prefix}country/FR`).value(rule("fra-1"));
      expect(await mirror.read()).toMatchObject({ kind: "delta", changed: 1 });
    } finally {
      small.close();
    }
  });

  it("reads everything once more deletions were seen than it keeps", async () => {
    const { prefix } = uniqueNames();
    const c = ctx.client;
    await c.put(`${prefix}country/_default`).value(rule("fra-1"));
    for (const cc of ["DE", "FR", "GB"]) await c.put(`${prefix}country/${cc}`).value(rule("fra-1"));
    const mirror = new PrefixMirror(c, prefix, { maxDeletes: 2 });
    const watch = await watchDeletes(prefix, mirror);
    try {
      await mirror.read();
      let last = 0;
      for (const cc of ["DE", "FR", "GB"])
        last = Number((await c.delete().key(`${prefix}country/${cc}`)).header.revision);
      await watch.upTo(last);
      expect(await mirror.read()).toMatchObject({
        kind: "full",
        reason: "too-many-deletes",
        count: 1,
      });
      await expectExact(mirror, prefix);
    } finally {
      await watch.cancel();
    }
  });

  it("stays exact through a compaction of the revision it last read", async () => {
    const { prefix } = uniqueNames();
    const c = ctx.client;
    await c.put(`${prefix}country/_default`).value(rule("fra-1"));
    const mirror = new PrefixMirror(c, prefix);
    await mirror.read();
    const put = await c.put(`${prefix}country/DE`).value(rule("ams-1")).exec();
    await c.kv.compact({ revision: put.header.revision, physical: true });
    expect(await mirror.read()).toMatchObject({ kind: "delta", changed: 1 });
    await expectExact(mirror, prefix);
  });

  it("takes a full read page by page and keeps the old state when the read fails midway", async () => {
    const { prefix } = uniqueNames();
    const c = ctx.client;
    await c.put(`${prefix}country/_default`).value(rule("fra-1"));
    for (const cc of ["DE", "FR", "GB", "IT", "ES"])
      await c.put(`${prefix}country/${cc}`).value(rule("fra-1"));
    let fail = false;
    let compactNext = false;
    const mirror = new PrefixMirror(c, prefix, {
      paging: {
        pageKeys: 2,
        betweenPages: async (page) => {
          if (fail && page === 2) throw new Error("connection lost between pages");
          if (compactNext) {
            compactNext = false;
            const put = await c.put(`${prefix}country/NL`).value(rule("ams-1")).exec();
            await c.kv.compact({ revision: put.header.revision, physical: true });
          }
        },
      },
    });
    expect(await mirror.read()).toMatchObject({ kind: "full", pages: 3, count: 6 });
    await c.put(`${prefix}country/DE`).value(rule("ams-1"));
    fail = true;
    await expect(mirror.read(true)).rejects.toThrow("connection lost between pages");
    // Nothing of the failed read shows: still the first read's state, whole.
    expect(mirror.index.size).toBe(6);
    expect(mirror.index.state().countries.get("DE")?.primary).toBe("fra-1");
    fail = false;
    // A compaction between pages starts the read over, into a fresh index: still exact.
    compactNext = true;
    const read = await mirror.read(true);
    expect(read).toMatchObject({ kind: "full", restarts: 1, count: 7 });
    await expectExact(mirror, prefix);
    expect(mirror.index.state().countries.get("DE")?.primary).toBe("ams-1");
  });

  it("reads everything from another cluster behind the same address, even at a higher revision (other-cluster)", async () => {
    const { prefix } = uniqueNames();
    const other = await startEtcd();
    const proxy = await switchableProxy(ctx.etcd.clientPort);
    const client = new Etcd3({ hosts: proxy.endpoint });
    const otherClient = new Etcd3({ hosts: other.endpoint });
    try {
      await ctx.client.put(`${prefix}country/_default`).value(rule("fra-1"));
      await ctx.client.put(`${prefix}country/DE`).value(rule("fra-1"));
      const mirror = new PrefixMirror(client, prefix);
      const first = await mirror.read();
      expect(first).toMatchObject({ kind: "full", reason: "first", count: 2 });
      // The other cluster holds other keys and has moved past the revision the mirror read.
      await otherClient.put(`${prefix}country/_default`).value(rule("par-1"));
      await otherClient.put(`${prefix}country/FR`).value(rule("ams-1"));
      let rev = 0;
      while (rev <= first.revision) {
        const put = await otherClient.put(`/elsewhere${prefix}x`).value("x").exec();
        rev = Number(put.header.revision);
      }
      proxy.switchTo(other.clientPort);
      const read = await readAfterReconnect(mirror);
      expect(read).toMatchObject({ kind: "full", reason: "other-cluster", count: 2 });
      expect(read.clusterId).not.toBe(first.clusterId);
      expect(read.revision).toBeGreaterThan(first.revision);
      const state = mirror.index.state();
      expect(state.countries.get("_default")?.primary).toBe("par-1");
      expect(state.countries.get("FR")?.primary).toBe("ams-1");
      expect(state.countries.has("DE")).toBe(false);
      // Then deltas again, against the new cluster.
      await otherClient.put(`${prefix}country/FR`).value(rule("fra-1"));
      expect(await mirror.read()).toMatchObject({ kind: "delta", changed: 1, count: 2 });
      expect(mirror.index.state().countries.get("FR")?.primary).toBe("fra-1");
    } finally {
      client.close();
      otherClient.close();
      await proxy.close();
      await other.stop();
    }
  });

  it("reads everything when the same cluster comes back at a lower revision (revision-back)", async () => {
    const { prefix } = uniqueNames();
    // Its own etcd: it is wiped and started again with the same name, peer URL and token, so
    // it has the same cluster id and begins its revisions anew (as a restore to an old state).
    const etcd = await startEtcd();
    const client = new Etcd3({ hosts: etcd.endpoint });
    try {
      for (const cc of ["_default", "DE", "FR", "GB", "IT"])
        await client.put(`${prefix}country/${cc}`).value(rule("fra-1"));
      const mirror = new PrefixMirror(client, prefix);
      const first = await mirror.read();
      expect(first).toMatchObject({ kind: "full", count: 5 });
      await etcd.kill();
      rmSync(etcd.dataDir, { recursive: true, force: true });
      mkdirSync(etcd.dataDir, { mode: 0o700 });
      await etcd.restart();
      await readAfterReconnect(new PrefixMirror(client, "/warm-up/"));
      await client.put(`${prefix}country/_default`).value(rule("ams-1"));
      const read = await mirror.read();
      expect(read).toMatchObject({ kind: "full", reason: "revision-back", count: 1 });
      expect(read.clusterId).toBe(first.clusterId);
      expect(read.revision).toBeLessThan(first.revision);
      const fresh = decodeSnapshot(await readPrefix(client, prefix), prefix);
      expect([...fresh.countries.keys()]).toEqual(["_default"]);
      expect([...mirror.index.state().countries.keys()]).toEqual(["_default"]);
      expect(mirror.index.state().countries.get("_default")?.primary).toBe("ams-1");
      // A mod revision names one value only within one history: the next delta is exact too.
      await client.put(`${prefix}country/DE`).value(rule("par-1"));
      expect(await mirror.read()).toMatchObject({ kind: "delta", changed: 1, count: 2 });
      expect(mirror.index.state().countries.get("DE")?.primary).toBe("par-1");
    } finally {
      client.close();
      await etcd.stop();
    }
  });
});
