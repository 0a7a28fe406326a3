import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { readSnapshot } from "../../core/index.js";
import { createEtcdClient } from "../../pusher/etcd-client.js";
import { PrefixMirror } from "../../pusher/prefix-mirror.js";
import { readPrefix } from "../../pusher/snapshot-reader.js";
import { uniqueNames, useEtcd } from "./harness.js";

const ctx = useEtcd();

const rule = (primary: string) => JSON.stringify({ primary, fallbacks: [] });

/** The mirror's state must be exactly what a fresh full read of etcd decodes to. */
async function expectExact(mirror: PrefixMirror, prefix: string): Promise<void> {
  const fresh = readSnapshot(await readPrefix(ctx.client, prefix), prefix);
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

describe("PrefixMirror: reads only what changed, proven complete (real etcd, SPEC §5.3/§5.9)", () => {
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
});
