import { describe, expect, it } from "vitest";
import { kvConverged, kvRoutes, seedRouting, uniqueNames, useEtcd, waitFor } from "./harness.js";

const ctx = useEtcd();

describe("boost expiry in the pusher", () => {
  it("ends a boost within 2 s of expires_at while etcd still keeps its key and lease", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const p = ctx.start({ prefix, electionKey });
    await kvConverged(ctx.client, p.kv, prefix);
    // The lease outlives the boost, as after a leader change that renewed its TTL.
    const lease = ctx.client.lease(120, { autoKeepAlive: false });
    ctx.cleanups.push(() => lease.revoke().catch(() => {}));
    const expiresAt = Date.now() + 3_000;
    await lease
      .put(`${prefix}override/DE`)
      .value(
        JSON.stringify({
          primary: "par-1",
          fallbacks: [],
          reason: "test boost",
          expires_at: new Date(expiresAt).toISOString(),
        }),
      )
      .exec();
    await waitFor("boost in KV", async () => {
      const m = await kvRoutes(p.kv);
      return m?.countries.DE?.source === "override/DE";
    });
    const endedAt = await waitFor(
      "boost ended in KV",
      async () => {
        const m = await kvRoutes(p.kv);
        return m?.countries.DE?.source === "country/DE" ? Date.now() : null;
      },
      10_000,
      20,
    );
    expect(endedAt).toBeGreaterThanOrEqual(expiresAt);
    expect(endedAt - expiresAt).toBeLessThanOrEqual(2_000);
    expect((await kvRoutes(p.kv))?.countries.DE?.pool).toBe("fra-1");
    // Nothing else changed in etcd: the key is still there, under a live lease.
    expect(await ctx.client.get(`${prefix}override/DE`).string()).not.toBeNull();
    console.info(`boost ended ${endedAt - expiresAt} ms after expires_at`);
  });

  it("ends a continent boost (override/EU) on time too, with nothing else changing in etcd", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const p = ctx.start({ prefix, electionKey });
    await kvConverged(ctx.client, p.kv, prefix);
    const lease = ctx.client.lease(120, { autoKeepAlive: false });
    ctx.cleanups.push(() => lease.revoke().catch(() => {}));
    const expiresAt = Date.now() + 3_000;
    await lease
      .put(`${prefix}override/EU`)
      .value(
        JSON.stringify({
          primary: "par-1",
          fallbacks: [],
          reason: "test continent boost",
          expires_at: new Date(expiresAt).toISOString(),
        }),
      )
      .exec();
    await waitFor("continent boost in KV", async () => {
      const m = await kvRoutes(p.kv);
      return m?.countries.FR?.source === "override/EU";
    });
    const endedAt = await waitFor(
      "continent boost ended in KV",
      async () => {
        const m = await kvRoutes(p.kv);
        return m && m.countries.FR?.source !== "override/EU" ? Date.now() : null;
      },
      10_000,
      20,
    );
    expect(endedAt).toBeGreaterThanOrEqual(expiresAt);
    expect(endedAt - expiresAt).toBeLessThanOrEqual(2_000);
    expect(await ctx.client.get(`${prefix}override/EU`).string()).not.toBeNull();
  });
});
