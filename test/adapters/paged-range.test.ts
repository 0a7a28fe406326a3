import { execFileSync } from "node:child_process";
import { Etcd3, GRPCResourceExhastedError } from "etcd3";
import { describe, expect, it } from "vitest";
import { PagedRangeError, readRangePaged, readRangePages } from "../../adapters/paged-range.js";
import { readPrefix as edgectlReadPrefix, readPrefix } from "../../adapters/prefix-read.js";
import { compile, DEFAULT_FLOOR_POOL, DEFAULT_ORIGIN_TEMPLATE } from "../../core/index.js";
import { createEtcdClient } from "../../pusher/etcd-client.js";
import { kvRoutes, seedRouting, uniqueNames, useEtcd, waitFor } from "../pusher/harness.js";

const ctx = useEtcd();

/** Writes `n` keys `junk/00000…` under `prefix` with `value`, 128 per transaction. */
async function putJunk(client: Etcd3, prefix: string, n: number, value: string): Promise<number> {
  let revision = 0;
  for (let i = 0; i < n; i += 128) {
    const success = [];
    for (let j = i; j < Math.min(n, i + 128); j++) {
      success.push({
        request_put: {
          key: Buffer.from(`${prefix}junk/${String(j).padStart(5, "0")}`),
          value: Buffer.from(value),
        },
      });
    }
    const res = await client.kv.txn({ compare: [], success, failure: [] });
    revision = Number(res.header.revision);
  }
  return revision;
}

/**
 * How many Range requests etcd at `endpoint` has started (its `/metrics`), read by a child process
 * so that it can be asked while this process is busy in a synchronous sink.
 */
function rangesStarted(endpoint: string): number {
  const script = `
    const text = await (await fetch(${JSON.stringify(`${endpoint}/metrics`)})).text();
    const line = text.split("\\n").find((l) => l.startsWith("grpc_server_started_total{") &&
      l.includes('grpc_method="Range"') && l.includes('grpc_service="etcdserverpb.KV"'));
    process.stdout.write(line ? line.split(" ").at(-1) : "NaN");`;
  return Number(
    execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }),
  );
}

const BIG = 1_400_000;
/** A 1.4 MB value: valid-looking JSON, far over the 64 KiB a routing value may hold. */
const bigValue = (c: string) => JSON.stringify({ status: "healthy", pad: c.repeat(BIG) });

describe("paged, pinned range reads (real etcd, docs/reference.md §5.9)", () => {
  it("reads every page at the first page's revision while writes land between the pages", async () => {
    const { prefix } = uniqueNames();
    const seeded = await putJunk(ctx.client, prefix, 300, "v0");
    const seen: number[] = [];
    const read = await readRangePaged(ctx.client, prefix, {
      pageKeys: 50,
      betweenPages: async (page, revision) => {
        seen.push(revision);
        // Rewrite every key, add one and delete one: none of it may show in this read.
        await putJunk(ctx.client, prefix, 300, `v${page}`);
        await ctx.client.put(`${prefix}junk/99999`).value("new");
        await ctx.client.delete().key(`${prefix}junk/00299`);
      },
    });
    expect(read.revision).toBe(seeded);
    expect(read.pages).toBe(6);
    expect(read.restarts).toBe(0);
    expect(seen).toEqual([seeded, seeded, seeded, seeded, seeded]);
    expect(read.kvs).toHaveLength(300);
    expect(new Set(read.kvs.map((kv) => kv.value.toString()))).toEqual(new Set(["v0"]));
    expect(read.kvs.at(-1)?.key.toString()).toBe(`${prefix}junk/00299`);
    // The same as one unpaged range at that revision, key by key.
    const whole = await ctx.client.kv.range({
      key: Buffer.from(prefix),
      range_end: Buffer.from(`${prefix.slice(0, -1)}0`),
      revision: seeded,
    });
    expect(read.kvs.map((kv) => `${kv.key}=${kv.value}@${kv.mod_revision}`)).toEqual(
      whole.kvs.map((kv) => `${kv.key}=${kv.value}@${kv.mod_revision}`),
    );
    // And a fresh read sees what was written in between.
    const after = await readRangePaged(ctx.client, prefix, { pageKeys: 50 });
    expect(after.revision).toBeGreaterThan(seeded);
    expect(after.kvs.map((kv) => kv.key.toString())).toContain(`${prefix}junk/99999`);
    expect(after.kvs.map((kv) => kv.key.toString())).not.toContain(`${prefix}junk/00299`);
  }, 60_000);

  it("has etcd serving the next page while the sink takes this one, and ends with no request left", async () => {
    const { prefix } = uniqueNames();
    await putJunk(ctx.client, prefix, 200, "v");
    const client = new Etcd3({ hosts: ctx.etcd.endpoint });
    try {
      let sent = 0;
      const range = client.kv.range.bind(client.kv);
      client.kv.range = (req, opts) => {
        sent += 1;
        return range(req, opts);
      };
      const before = rangesStarted(ctx.etcd.endpoint);
      const askedWhenHanded: number[] = [];
      const etcdHadWhenHanded: number[] = [];
      const read = await readRangePages(
        client,
        prefix,
        () => (kvs) => {
          askedWhenHanded.push(sent);
          // Asked for is not enough: the request must have reached etcd before the sink runs.
          etcdHadWhenHanded.push(rangesStarted(ctx.etcd.endpoint) - before);
          expect(kvs).toHaveLength(50);
        },
        { pageKeys: 50 },
      );
      expect(read.pages).toBe(4);
      expect(read.count).toBe(200);
      // Page k is handed over with page k + 1 already asked for; the last page asks for nothing.
      expect(askedWhenHanded).toEqual([2, 3, 4, 4]);
      expect(etcdHadWhenHanded).toEqual([2, 3, 4, 4]);
      expect(sent).toBe(4);
    } finally {
      client.close();
    }
  }, 60_000);

  it("starts over at the new revision when its revision is compacted between pages", async () => {
    const { prefix } = uniqueNames();
    const seeded = await putJunk(ctx.client, prefix, 120, "old");
    let compactions = 0;
    const read = await readRangePaged(ctx.client, prefix, {
      pageKeys: 40,
      betweenPages: async (page) => {
        if (compactions > 0 || page !== 1) return;
        compactions += 1;
        const res = await ctx.client.put(`${prefix}junk/00000`).value("new").exec();
        await ctx.client.kv.compact({ revision: res.header.revision, physical: true });
      },
    });
    expect(compactions).toBe(1);
    expect(read.restarts).toBe(1);
    expect(read.revision).toBeGreaterThan(seeded);
    expect(read.kvs).toHaveLength(120);
    expect(read.kvs[0]?.value.toString()).toBe("new");
    expect(read.kvs.slice(1).every((kv) => kv.value.toString() === "old")).toBe(true);
  }, 30_000);

  it("gives up with a typed error when every attempt is compacted under it", async () => {
    const { prefix } = uniqueNames();
    await putJunk(ctx.client, prefix, 20, "x");
    const attempt = readRangePaged(ctx.client, prefix, {
      pageKeys: 10,
      maxRestarts: 2,
      betweenPages: async () => {
        const res = await ctx.client.put(`${prefix}junk/00001`).value("y").exec();
        await ctx.client.kv.compact({ revision: res.header.revision, physical: true });
      },
    });
    await expect(attempt).rejects.toBeInstanceOf(PagedRangeError);
    await expect(attempt).rejects.toMatchObject({ code: "compacted-repeatedly" });
  }, 30_000);

  it("reads three 1.4 MB values among thousands of keys, where one unpaged default read fails", async () => {
    const { prefix } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    for (const c of ["a", "b", "c"])
      await ctx.client.put(`${prefix}health/big-${c}`).value(bigValue(c));
    await putJunk(ctx.client, prefix, 3_000, JSON.stringify({ junk: true }));

    // grpc-js's default 4 MiB receive limit: what a single range read of the prefix used to hit.
    const plain = new Etcd3({ hosts: ctx.etcd.endpoint });
    try {
      await expect(plain.getAll().prefix(prefix).exec()).rejects.toBeInstanceOf(
        GRPCResourceExhastedError,
      );
    } finally {
      plain.close();
    }

    const client = createEtcdClient({ endpoints: [ctx.etcd.endpoint] });
    try {
      const read = await readPrefix(client, prefix);
      expect(read.count).toBe(3_000 + 3 + 9);
      const snapshotOptions = {
        carried: null,
        prefix,
        floorPool: DEFAULT_FLOOR_POOL,
        originTemplate: DEFAULT_ORIGIN_TEMPLATE,
        now: new Date(),
      };
      const result = compile(read, snapshotOptions);
      // Each oversized value is a problem naming its key; the rest compiles.
      for (const c of ["a", "b", "c"]) {
        expect(result.problems.map((p) => p.key)).toContain(`health/big-${c}`);
      }
      expect(result.map.countries.DE?.chain.map((l) => l.pool)).toEqual([
        "fra-1",
        "ams-1",
        "par-1",
      ]);
      // edgectl reads through the same pages.
      const cli = await edgectlReadPrefix(client, prefix);
      expect(cli.revision).toBe(read.revision);
      expect(cli.entries).toHaveLength(read.count);
      expect(cli.entries.find((e) => e.rel === "health/big-b")?.value.length).toBe(
        Buffer.byteLength(bigValue("b")),
      );
    } finally {
      client.close();
    }
  }, 60_000);

  it("asks again with fewer keys when a page overflows the receive limit, and names a value that never fits", async () => {
    const { prefix } = uniqueNames();
    for (const c of ["a", "b", "c"])
      await ctx.client.put(`${prefix}health/big-${c}`).value(bigValue(c));
    await putJunk(ctx.client, prefix, 50, "small");
    const limited = (bytes: number) =>
      createEtcdClient(
        { endpoints: [ctx.etcd.endpoint] },
        { grpcOptions: { "grpc.max_receive_message_length": bytes } },
      );
    const two = limited(2 * 1024 * 1024);
    try {
      const read = await readRangePaged(two, prefix);
      expect(read.kvs).toHaveLength(53);
      expect(read.pages).toBeGreaterThanOrEqual(3);
    } finally {
      two.close();
    }
    const one = limited(1024 * 1024);
    try {
      const attempt = readRangePaged(one, prefix);
      await expect(attempt).rejects.toMatchObject({ code: "value-too-large" });
      await expect(attempt).rejects.toThrow(/health\/big-a/);
    } finally {
      one.close();
    }
  }, 60_000);

  it("a pusher keeps routing with 1.4 MB and over-64 KiB values under its prefix, naming each", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    for (const c of ["a", "b", "c"])
      await ctx.client.put(`${prefix}health/big-${c}`).value(bigValue(c));
    await ctx.client
      .put(`${prefix}country/FR`)
      .value(JSON.stringify({ primary: "par-1", fallbacks: [], pad: "x".repeat(70 * 1024) }));
    const p = ctx.start({ prefix, electionKey });
    const first = await waitFor("a first map", () => kvRoutes(p.kv));
    expect(first.countries.DE?.pool).toBe("fra-1");
    expect(first.problems.join("\n")).toMatch(/country\/FR: value is \d+ bytes, over 64 KiB/);
    for (const c of ["a", "b", "c"]) expect(first.problems.join("\n")).toContain(`health/big-${c}`);
    // A change still goes through.
    await ctx.client
      .put(`${prefix}country/DE`)
      .value(JSON.stringify({ primary: "ams-1", fallbacks: ["par-1"] }));
    await waitFor(
      "DE moved to ams-1",
      async () => (await kvRoutes(p.kv))?.countries.DE?.pool === "ams-1",
    );
  }, 60_000);
});
