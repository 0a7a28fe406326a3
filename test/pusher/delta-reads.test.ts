import { describe, expect, it } from "vitest";
import { parsePromText, sampleValue } from "../../testkit/prom-text.js";
import { kvConverged, kvRoutes, seedRouting, uniqueNames, useEtcd, waitFor } from "./harness.js";

const suite = useEtcd();

describe("pusher reads only what changed (real etcd, docs/reference.md §5.3/§5.9)", () => {
  it("follows puts, deletes and a lapsed heartbeat lease with delta reads, and reads everything on resync", async () => {
    const { client } = suite;
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const p = suite.start({ prefix, electionKey });
    await kvConverged(client, p.kv, prefix);
    const scrape = async () => parsePromText(await p.pusher.metrics.registry.metrics());
    const fullReads = async () =>
      (await scrape())
        .filter((s) => s.name === "edge_pusher_full_reads_total")
        .reduce((sum, s) => sum + s.value, 0);
    const reads = async () => sampleValue(await scrape(), "edge_pusher_range_reads_total") ?? 0;
    const fullOf = async (reason: string) =>
      sampleValue(await scrape(), "edge_pusher_full_reads_total", { reason }) ?? 0;
    expect(await fullOf("first")).toBe(1);
    // A new leader reads KV again once its predecessor's window has closed (electionTtl): KV
    // only, no read of etcd.
    await waitFor(
      "the new leader's late-write check",
      () => p.kv.reads.filter((r) => r.key === "routes").length >= 2,
    );
    expect(await fullOf("asked")).toBe(0);
    const fullBefore = await fullReads();
    const readsBefore = await reads();

    // fra-1's heartbeat on a 1 s lease, kept alive until DE is seen on fra-1, then let lapse:
    // etcd deletes the key itself.
    const lease = client.lease(1);
    await lease.put(`${prefix}health/fra-1`).value(JSON.stringify({ status: "healthy" }));
    await client
      .put(`${prefix}country/FR`)
      .value(JSON.stringify({ primary: "par-1", fallbacks: [] }));
    await client.delete().key(`${prefix}country/DE`);
    await waitFor("FR in KV and DE gone", async () => {
      const m = await kvRoutes(p.kv);
      return m?.countries.FR?.pool === "par-1" && !m.countries.DE ? m : null;
    });
    await client
      .put(`${prefix}country/DE`)
      .value(JSON.stringify({ primary: "fra-1", fallbacks: ["ams-1"] }));
    await waitFor(
      "DE back on fra-1",
      async () => (await kvRoutes(p.kv))?.countries.DE?.pool === "fra-1",
    );
    lease.release();
    const lapsed = await waitFor(
      "DE off fra-1 once its heartbeat lease lapsed",
      async () => {
        const m = await kvRoutes(p.kv);
        return m?.countries.DE?.pool === "ams-1" ? m : null;
      },
      10_000,
    );
    expect(lapsed.countries.DE?.chain.map((l) => l.pool)).toEqual(["ams-1"]);
    await kvConverged(client, p.kv, prefix);
    expect(await reads()).toBeGreaterThan(readsBefore);
    // Every one of those reads was a delta: the watch's delete events proved each deletion.
    expect(await fullReads()).toBe(fullBefore);

    p.pusher.resync();
    await waitFor("a full read for the resync", async () => (await fullOf("asked")) === 1);
  });
});
