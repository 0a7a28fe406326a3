import { setTimeout as sleep } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import type { CompiledMap, MapMeta } from "../../core/index.js";
import { MemoryKv, type MemoryKvWrite } from "../helpers/memory-kv.js";
import { type PusherUnderTest, seedRouting, uniqueNames, useEtcd, waitFor } from "./harness.js";

const ctx = useEtcd();

const start = ctx.start;

const writer = (w: MemoryKvWrite) => (JSON.parse(w.value) as MapMeta).pusher;
const metaWrites = (kv: MemoryKv, id: string) =>
  kv.writesOf("meta").filter((w) => writer(w) === id);

describe("pusher leadership", () => {
  it("lets only the leader write; a crashed leader's standby takes over within the TTL", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const kv = new MemoryKv();
    const ttl = 2;
    const a = start({
      prefix,
      electionKey,
      kv,
      id: "pusher-a",
      electionTtl: ttl,
      heartbeatSeconds: 1,
    });
    await waitFor("a leads", () => a.pusher.status.role === "leader");
    const b = start({
      prefix,
      electionKey,
      kv,
      id: "pusher-b",
      electionTtl: ttl,
      heartbeatSeconds: 1,
    });
    await sleep(2_500);
    expect(b.pusher.status.role).toBe("standby");
    expect(metaWrites(kv, "pusher-a").length).toBeGreaterThanOrEqual(2);
    expect(metaWrites(kv, "pusher-b")).toEqual([]);
    expect((await fetchHealth(b)).ok).toBe(true);

    const crashedAt = Date.now();
    await a.crash();
    await waitFor("b takes over", () => metaWrites(kv, "pusher-b").length > 0, 10_000);
    const firstB = metaWrites(kv, "pusher-b")[0]?.at ?? 0;
    expect(firstB - crashedAt).toBeLessThanOrEqual(ttl * 1000 + 3_000);
    expect(metaWrites(kv, "pusher-a").filter((w) => w.at > crashedAt)).toEqual([]);
    expect(b.pusher.status.role).toBe("leader");
  });

  it("hands over at once when the leader resigns on a graceful stop", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const kv = new MemoryKv();
    const a = start({ prefix, electionKey, kv, id: "pusher-a", electionTtl: 10 });
    await waitFor("a leads", () => a.pusher.status.role === "leader");
    const b = start({ prefix, electionKey, kv, id: "pusher-b", electionTtl: 10 });
    await waitFor("a pushed", () => metaWrites(kv, "pusher-a").length > 0);
    const stoppedAt = Date.now();
    await a.stop();
    await waitFor("b leads", () => b.pusher.status.role === "leader", 5_000);
    await waitFor("b writes", () => metaWrites(kv, "pusher-b").length > 0, 5_000);
    // Well under the 10 s TTL: the lease was revoked, not left to expire.
    expect(Date.now() - stoppedAt).toBeLessThan(5_000);
  });

  it("stops writing when its lease cannot be renewed, before a standby takes over", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const kv = new MemoryKv();
    const ttl = 3;
    const px = await ctx.proxy();
    const a = start({
      endpoint: px.endpoint,
      prefix,
      electionKey,
      kv,
      id: "pusher-a",
      electionTtl: ttl,
      heartbeatSeconds: 1,
    });
    await waitFor("a leads", () => a.pusher.status.role === "leader");
    const b = start({
      prefix,
      electionKey,
      kv,
      id: "pusher-b",
      electionTtl: ttl,
      heartbeatSeconds: 1,
    });
    await waitFor("a heartbeats", () => metaWrites(kv, "pusher-a").length >= 2);
    const cutAt = Date.now();
    px.disconnect();
    await waitFor("b takes over", () => metaWrites(kv, "pusher-b").length > 0, 15_000);
    const firstB = metaWrites(kv, "pusher-b")[0]?.at ?? 0;
    const lastA = Math.max(...metaWrites(kv, "pusher-a").map((w) => w.at));
    // A keeps heartbeating only while its last renewal is under 2/3 of the TTL old.
    expect(lastA).toBeLessThan(cutAt + (ttl * 1000 * 2) / 3 + 500);
    expect(lastA).toBeLessThan(firstB);
    expect(a.pusher.status.document().lease_ok).toBe(false);
    expect(b.pusher.status.role).toBe("leader");
  });

  it("reads KV once more a TTL after winning, not etcd, and repairs a former leader's late write", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const kv = new MemoryKv();
    const ttl = 3;
    const a = start({ prefix, electionKey, kv, id: "pusher-a", electionTtl: ttl });
    await waitFor("a pushed", () => metaWrites(kv, "pusher-a").length > 0);
    const reads = await rangeReads(a);
    // The former leader's write lands after the takeover: the same revision, routed elsewhere.
    const routes = kv.json<CompiledMap>("routes");
    const de = routes?.countries.DE;
    if (!routes || !de) throw new Error("no DE route in KV");
    kv.data.set(
      "routes",
      JSON.stringify({
        ...routes,
        countries: { ...routes.countries, DE: { ...de, pool: "late-1" } },
      }),
    );
    const placedAt = Date.now();
    await waitFor(
      "the late write repaired",
      () => kv.json<CompiledMap>("routes")?.countries.DE?.pool === de.pool,
      (ttl + 3) * 1000,
    );
    expect(kv.reads.filter((r) => r.key === "routes" && r.at >= placedAt).length).toBeGreaterThan(
      0,
    );
    // KV was read again; etcd was not (its state is the watch's since the activation).
    expect(await rangeReads(a)).toBe(reads);
  });
});

async function rangeReads(p: PusherUnderTest): Promise<number> {
  return (await p.pusher.metrics.rangeReads.get()).values[0]?.value ?? 0;
}

async function fetchHealth(p: PusherUnderTest) {
  return p.pusher.status.health();
}
