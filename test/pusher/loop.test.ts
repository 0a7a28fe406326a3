import { setTimeout as sleep } from "node:timers/promises";
import type { Etcd3 } from "etcd3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { KvError } from "../../adapters/kv/kv-sink.js";
import { COUNTRY_CODES, type MapMeta, sameRouting } from "../../core/index.js";
import { KV_WRITE_SPACING_MS } from "../../pusher/write-slots.js";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { MemoryKv } from "../helpers/memory-kv.js";
import {
  compileNow,
  kvConverged,
  kvRoutes,
  type PusherUnderTest,
  type StartPusherOptions,
  seedRouting,
  startPusher,
  testClient,
  uniqueNames,
  waitFor,
} from "./harness.js";

let etcd: EtcdServer;
let client: Etcd3;
const running: PusherUnderTest[] = [];

beforeAll(async () => {
  etcd = await startEtcd();
  client = testClient(etcd.endpoint);
});
afterEach(async () => {
  await Promise.all(running.splice(0).map((p) => p.stop()));
});
afterAll(async () => {
  client?.close();
  await etcd?.stop();
});

function start(o: Omit<StartPusherOptions, "endpoint">): PusherUnderTest {
  const p = startPusher({ endpoint: etcd.endpoint, ...o });
  running.push(p);
  return p;
}

async function put(key: string, value: unknown): Promise<number> {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  const res = await client.put(key).value(text).exec();
  return Number(res.header.revision);
}

/** Waits until KV routes match etcd's current state and are at least at `rev`. */
const converged = (kv: MemoryKv, prefix: string, rev = 0) =>
  kvConverged(client, kv, prefix, rev, 15_000);

describe("pusher loop (memory KV, real etcd)", () => {
  it("pushes the compiled map and meta on start", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const p = start({ prefix, electionKey, id: "pusher-a" });
    const routes = await converged(p.kv, prefix);
    expect(routes.countries.DE?.pool).toBe("fra-1");
    expect(routes.default.pool).toBe("ams-1");
    expect(routes.epoch).toBe(1);
    const meta = await waitFor("meta", () => p.kv.json<MapMeta>("meta"));
    expect(meta).toMatchObject({ v: 1, rev: routes.rev, epoch: 1, pusher: "pusher-a" });
    expect(meta.countries).toBe(1);
    expect(meta.problems).toEqual([]);
    await waitFor("status", () => p.pusher.status.pushedRevision === routes.rev);
    expect(p.pusher.status.role).toBe("leader");
  });

  it("tells its owner when work ends with nothing waiting (onIdle: where the heap trim runs)", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const kv = new MemoryKv();
    kv.latencyMs = 40;
    let inFlight = 0;
    const putMany = kv.putMany.bind(kv);
    kv.putMany = async (entries, options) => {
      inFlight++;
      try {
        await putMany(entries, options);
      } finally {
        inFlight--;
      }
    };
    const leaderIdle: number[] = [];
    const rolesAtIdle: string[] = [];
    let p: PusherUnderTest | null = null;
    p = start({
      prefix,
      electionKey,
      kv,
      onIdle: () => {
        leaderIdle.push(inFlight);
        rolesAtIdle.push(p?.pusher.status.role ?? "not started");
      },
    });
    await converged(kv, prefix);
    await waitFor("idle after the first push", () => leaderIdle.length > 0);
    // Not after the first compile while the election was still out: a trim then held it up.
    expect(rolesAtIdle[0]).toBe("leader");
    const standbyIdle: number[] = [];
    start({ prefix, electionKey, kv: new MemoryKv(), onIdle: () => standbyIdle.push(0) });
    await waitFor("standby", () => standbyIdle.length > 0);
    const [leaderBefore, standbyBefore] = [leaderIdle.length, standbyIdle.length];
    for (const pool of ["par-1", "ams-1", "fra-1"]) {
      const rev = await put(`${prefix}country/NL`, { primary: pool, fallbacks: [] });
      await converged(kv, prefix, rev);
      await waitFor("idle after the write", () => leaderIdle.length > leaderBefore);
    }
    await waitFor("standby idle after its compile", () => standbyIdle.length > standbyBefore);
    // Never while a write is in flight.
    expect(leaderIdle.every((n) => n === 0)).toBe(true);
    expect(p.pusher.status.role).toBe("leader");
  });

  it("starts a change's write before it reports the compile (pool reports, metrics, /ui)", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const kv = new MemoryKv();
    let p: PusherUnderTest | null = null;
    const seenAtWrite: unknown[] = [];
    const putMany = kv.putMany.bind(kv);
    kv.putMany = async (entries, options) => {
      if (entries.some((e) => e.key === "routes")) seenAtWrite.push(p?.pusher.status.pools);
      await putMany(entries, options);
    };
    // The write can start at once only when nothing holds it: not the `routes` slot (a compile
    // for a busy slot is made early and waits for it), not a KV read in flight (the election
    // TTL sets when the leader's one re-read of KV runs: a long one keeps it out of this test).
    p = start({ prefix, electionKey, kv, electionTtl: 60 });
    await converged(kv, prefix);
    await sleep(KV_WRITE_SPACING_MS + 150);
    const rev = await put(`${prefix}country/NL`, { primary: "par-1", fallbacks: [] });
    await converged(kv, prefix, rev);
    await sleep(50);
    // The write of NL began while the pool reports were still the previous compile's.
    expect(seenAtWrite.length).toBeGreaterThanOrEqual(2);
    expect(seenAtWrite.at(-1)).toBeDefined();
    expect(p.pusher.status.pools).not.toBe(seenAtWrite.at(-1));
  });

  it("a graceful stop right after a commit still writes it (one last range read)", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const p = start({ prefix, electionKey });
    const first = await converged(p.kv, prefix);
    for (const [i, cc] of ["NL", "PL", "BE"].entries()) {
      const rev = await put(`${prefix}country/${cc}`, { primary: "par-1", fallbacks: [] });
      expect(rev).toBeGreaterThan(first.rev + i);
    }
    const last = await put(`${prefix}country/CZ`, { primary: "fra-1", fallbacks: [] });
    // no waiting: the watch event for CZ has most likely not been handled yet
    await p.stop();
    const routes = await kvRoutes(p.kv);
    expect(routes?.rev).toBeGreaterThanOrEqual(last);
    expect(routes?.countries.CZ?.pool).toBe("fra-1");
  });

  it("follows a put, a delete and a health lease expiry", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    // Kept alive until the pusher has seen it (a slow start must not outlive the lease).
    const lease = client.lease(2);
    await lease.put(`${prefix}health/fra-1`).value(JSON.stringify({ status: "healthy" }));
    const p = start({ prefix, electionKey });
    await waitFor(
      "DE on fra-1",
      async () => (await kvRoutes(p.kv))?.countries.DE?.pool === "fra-1",
    );

    // The lease is no longer renewed: fra-1's health key expires and DE falls back to ams-1.
    lease.release();
    const expired = await waitFor(
      "DE on ams-1 after the health lease expired",
      async () => {
        const m = await kvRoutes(p.kv);
        return m?.countries.DE?.pool === "ams-1" ? m : null;
      },
      10_000,
    );
    expect(expired.countries.DE?.chain.map((c) => c.pool)).toEqual(["ams-1", "par-1"]);

    const r1 = await put(`${prefix}health/ams-1`, { status: "draining" });
    const m1 = await converged(p.kv, prefix, r1);
    expect(m1.countries.DE?.pool).toBe("par-1");
    expect(m1.default.pool).toBe("par-1");

    const del = await client.delete().key(`${prefix}country/DE`).exec();
    const m2 = await converged(p.kv, prefix, Number(del.header.revision));
    expect(m2.countries.DE).toBeUndefined();
  });

  it("lets an override take precedence until its lease expires", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const p = start({ prefix, electionKey });
    await converged(p.kv, prefix);
    const lease = client.lease(2);
    await lease
      .put(`${prefix}override/DE`)
      .value(JSON.stringify({ primary: "par-1", fallbacks: [], reason: "test" }));
    const boosted = await waitFor("override in KV", async () => {
      const m = await kvRoutes(p.kv);
      return m?.countries.DE?.source === "override/DE" ? m : null;
    });
    expect(boosted.countries.DE?.pool).toBe("par-1");
    lease.release(); // no more renewals: the override expires by itself
    const after = await waitFor(
      "override expiry in KV",
      async () => {
        const m = await kvRoutes(p.kv);
        return m?.countries.DE?.source === "country/DE" ? m : null;
      },
      10_000,
    );
    expect(after.countries.DE?.pool).toBe("fra-1");
  });

  it("keeps good keys when a bad value appears and reports it in problems", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const p = start({ prefix, electionKey });
    await converged(p.kv, prefix);
    await put(`${prefix}country/FR`, "{not json");
    const rev = await put(`${prefix}country/NL`, { primary: "ams-1", fallbacks: ["fra-1"] });
    const m = await converged(p.kv, prefix, rev);
    expect(m.countries.NL?.pool).toBe("ams-1");
    expect(m.countries.DE?.pool).toBe("fra-1");
    expect(m.problems.some((s) => s.startsWith("country/FR:"))).toBe(true);
    const meta = await waitFor("meta with problems", () => {
      const doc = p.kv.json<MapMeta>("meta");
      return doc && doc.rev === m.rev ? doc : null;
    });
    expect(meta.problems).toEqual(m.problems);
    expect(p.pusher.status.document().problems).toEqual(m.problems);
    const metrics = await p.pusher.metrics.registry.getSingleMetricAsString("edge_pusher_problems");
    expect(metrics).toMatch(new RegExp(`edge_pusher_problems ${m.problems.length}\\b`));
  });

  it("reaches the exact final state of 1,000 puts, writing routes at most once a second", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const p = start({ prefix, electionKey });
    await converged(p.kv, prefix);
    const codes = [...COUNTRY_CODES].filter((c) => c.length === 2).slice(0, 40);
    const pools = ["fra-1", "ams-1", "par-1"];
    const t0 = Date.now();
    let last = 0;
    for (let batch = 0; batch < 20; batch++) {
      const revs = await Promise.all(
        Array.from({ length: 50 }, (_, j) => {
          const i = batch * 50 + j;
          const cc = codes[i % codes.length] ?? "DE";
          const primary = pools[(i + batch) % 3] ?? "fra-1";
          return put(`${prefix}country/${cc}`, { primary, fallbacks: [] });
        }),
      );
      last = Math.max(last, ...revs);
    }
    const final = await converged(p.kv, prefix, last);
    const expected = await compileNow(client, prefix);
    expect(sameRouting(final, expected)).toBe(true);
    expect(Object.keys(final.countries).length).toBe(codes.length + (codes.includes("DE") ? 0 : 1));
    const writes = p.kv.writesOf("routes").filter((w) => w.at >= t0 - 1_000);
    for (let i = 1; i < writes.length; i++) {
      const gap = (writes[i]?.at ?? 0) - (writes[i - 1]?.at ?? 0);
      expect(gap).toBeGreaterThanOrEqual(990);
    }
    const elapsed = (Date.now() - t0) / 1000;
    expect(writes.length).toBeLessThanOrEqual(Math.ceil(elapsed) + 2);
  });

  it("retries failed KV writes with backoff, honouring Retry-After, and drops nothing", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const kv = new MemoryKv();
    kv.failWrites(3);
    const p = start({ prefix, electionKey, kv });
    await converged(kv, prefix);
    expect(kv.failures.length).toBe(3);
    kv.failWrites(2, () => new KvError("rate-limited", "429", 400));
    const rev = await put(`${prefix}country/NL`, { primary: "par-1", fallbacks: [] });
    const m = await converged(kv, prefix, rev);
    expect(m.countries.NL?.pool).toBe("par-1");
    const limited = kv.failures.slice(3);
    expect(limited.length).toBe(2);
    const gap = (limited[1]?.at ?? 0) - (limited[0]?.at ?? 0);
    expect(gap).toBeGreaterThanOrEqual(390);
    const text = await p.pusher.metrics.registry.getSingleMetricAsString(
      "edge_pusher_push_errors_total",
    );
    expect(text).toMatch(/edge_pusher_push_errors_total 5\b/);
  });

  it("keeps the last known good route from KV across a restart", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const kv = new MemoryKv();
    const a = start({ prefix, electionKey, kv });
    await waitFor("first push", async () => (await kvRoutes(kv))?.countries.DE?.pool === "fra-1");
    await a.stop();
    const rev = await put(`${prefix}country/DE`, { primary: "fra-1", fallbacks: "oops" });
    start({ prefix, electionKey, kv });
    const m = await waitFor("restarted pusher's push", async () => {
      const r = await kvRoutes(kv);
      return r && r.rev >= rev ? r : null;
    });
    expect(m.countries.DE?.pool).toBe("fra-1");
    expect(m.problems.some((s) => s.startsWith("country/DE:"))).toBe(true);
    // Without the previous map the invalid rule would leave DE to _default.
    expect((await compileNow(client, prefix)).countries.DE).toBeUndefined();
  });

  it("repairs drift found by the periodic reconcile and counts it", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const p = start({ prefix, electionKey });
    const good = await converged(p.kv, prefix);
    const drifts = async () =>
      p.pusher.metrics.registry.getSingleMetricAsString("edge_pusher_drift_repairs_total");
    p.pusher.resync();
    await sleep(1_500);
    expect(await drifts()).toMatch(/edge_pusher_drift_repairs_total 0\b/);

    const tampered = { ...good, default: { ...good.default, pool: "par-1" } };
    p.kv.data.set("routes", JSON.stringify(tampered));
    p.pusher.resync();
    await waitFor("drift repaired", async () => (await kvRoutes(p.kv))?.default.pool === "ams-1");
    expect(await drifts()).toMatch(/edge_pusher_drift_repairs_total 1\b/);
  });

  it("rewrites KV left by another etcd history (revision above etcd's), loudly, and only then", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const current = await compileNow(client, prefix);
    // A map from a replaced or restored etcd: a revision this etcd has not reached, other routes.
    const foreign = {
      ...current,
      rev: current.rev + 100_000,
      default: { ...current.default, pool: "par-1" },
    };
    const kv = new MemoryKv();
    kv.data.set("routes", JSON.stringify(foreign));
    // A short consistency window: an old map still read after it is drift, repaired.
    const p = start({ prefix, electionKey, kv, tuning: { kvStaleReadMs: 2_000 } });
    const resets = async () =>
      p.pusher.metrics.registry.getSingleMetricAsString("edge_pusher_kv_history_resets_total");
    const routes = await converged(p.kv, prefix);
    expect(routes.rev).toBeLessThan(foreign.rev);
    expect(routes.default.pool).toBe("ams-1");
    expect(routes.history).toBe(foreign.history + 1);
    expect(await resets()).toMatch(/edge_pusher_kv_history_resets_total 1\b/);
    expect(p.pusher.status.document().last_error?.message).toContain("etcd started a new history");

    // A newer map from this same history (another leader's) is not a reset: etcd has reached it.
    const outside = `/elsewhere${prefix}`;
    const bumped = Number((await client.put(outside).value("x").exec()).header.revision);
    const newer = { ...routes, rev: bumped };
    p.kv.data.set("routes", JSON.stringify(newer));
    p.pusher.resync();
    await sleep(1_500);
    expect(await resets()).toMatch(/edge_pusher_kv_history_resets_total 1\b/);
    expect((await kvRoutes(p.kv))?.rev).toBeGreaterThanOrEqual(bumped);

    // A stale copy of the old history's map (KV is eventually consistent) is no new history;
    // still read once the window has passed, it is drift, rewritten.
    p.kv.data.set("routes", JSON.stringify(foreign));
    p.pusher.resync();
    const repaired = await waitFor("old copy rewritten after the window", async () => {
      const m = await kvRoutes(p.kv);
      return m && m.history === routes.history && m.default.pool === "ams-1" ? m : null;
    });
    expect(repaired.rev).toBeGreaterThanOrEqual(bumped);
    expect(await resets()).toMatch(/edge_pusher_kv_history_resets_total 1\b/);
    await client.delete().key(outside);
  });

  it("takes the history of a map in KV that another pusher wrote for this etcd, counting no reset", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const current = await compileNow(client, prefix);
    // Written by a pusher that followed a restore: history 3, a revision this etcd has reached.
    const kv = new MemoryKv();
    kv.data.set("routes", JSON.stringify({ ...current, history: 3 }));
    const p = start({ prefix, electionKey, kv });
    const rev = Number(
      (await client.put(`${prefix}country/FR`).value('{"primary":"par-1"}').exec()).header.revision,
    );
    const routes = await converged(p.kv, prefix, rev);
    expect(routes.history).toBe(3);
    expect(p.pusher.status.document().history).toBe(3);
    expect(
      await p.pusher.metrics.registry.getSingleMetricAsString(
        "edge_pusher_kv_history_resets_total",
      ),
    ).toMatch(/edge_pusher_kv_history_resets_total 0\b/);
  });

  it("rewrites meta every heartbeat without rewriting routes", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const p = start({ prefix, electionKey, heartbeatSeconds: 1 });
    await converged(p.kv, prefix);
    const routesBefore = p.kv.writesOf("routes").length;
    const metaBefore = p.kv.writesOf("meta").length;
    await sleep(3_500);
    expect(p.kv.writesOf("meta").length).toBeGreaterThanOrEqual(metaBefore + 2);
    expect(p.kv.writesOf("routes").length).toBe(routesBefore);
    const beats = p.kv.writesOf("meta").map((w) => (JSON.parse(w.value) as MapMeta).heartbeat_at);
    expect(new Set(beats).size).toBe(beats.length);
  });
});
