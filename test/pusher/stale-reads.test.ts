import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createCloudflareSink } from "../../adapters/kv/cloudflare-sink.js";
import { Secret } from "../../adapters/kv/secret.js";
import {
  type CompiledMap,
  DEFAULT_FLOOR_POOL,
  DEFAULT_ORIGIN_TEMPLATE,
  parseMap,
} from "../../core/index.js";
import { systemClock } from "../../pusher/clock.js";
import { createEtcdClient } from "../../pusher/etcd-client.js";
import { createPusher, type Pusher } from "../../pusher/pusher.js";
import {
  type KvStandin,
  type KvStandinOptions,
  type StaleReadOptions,
  startKvStandin,
} from "../../testkit/kv-standin.js";
import { compileNow, seedRouting, uniqueNames, useEtcd, waitFor } from "./harness.js";

const ctx = useEtcd();

/** A stand-in with stale reads whose `routes` writes are recorded in order (the truth). */
async function staleKv(
  staleReads: StaleReadOptions,
  extra: KvStandinOptions = {},
): Promise<{ s: KvStandin; routesWrites: CompiledMap[]; routes: () => CompiledMap | null }> {
  const s = await startKvStandin({ perKeyWriteLimit: "off", seed: 3, staleReads, ...extra });
  ctx.cleanups.push(() => s.close());
  const routesWrites: CompiledMap[] = [];
  const set = s.values.set.bind(s.values);
  s.values.set = (key: string, value: string) => {
    const map = key === "routes" ? parseMap(value) : null;
    if (map) routesWrites.push(map);
    return set(key, value);
  };
  const routes = () => {
    const text = s.values.get("routes");
    return text === undefined ? null : parseMap(text);
  };
  return { s, routesWrites, routes };
}

/** A real pusher writing through the Cloudflare sink to the stand-in. */
function startPusher(
  s: KvStandin,
  o: {
    prefix: string;
    electionKey: string;
    id: string;
    token?: string;
    staleMs: number;
    resyncSeconds?: number;
  },
): { pusher: Pusher; crash: () => Promise<void> } {
  const etcd = createEtcdClient({ endpoints: [ctx.etcd.endpoint] });
  const kv = createCloudflareSink({
    accountId: s.accountId,
    namespaceId: s.namespaceId,
    apiToken: new Secret(o.token ?? s.token),
    baseUrl: s.url,
    timeoutMs: 2_000,
  });
  const pusher = createPusher({
    etcd,
    kv,
    logger: pino({ level: process.env.PUSHER_TEST_LOG ?? "silent" }),
    clock: systemClock,
    config: {
      prefix: o.prefix,
      originTemplate: DEFAULT_ORIGIN_TEMPLATE,
      floorPool: DEFAULT_FLOOR_POOL,
      heartbeatSeconds: 60,
      resyncSeconds: o.resyncSeconds ?? 600,
      electionKey: o.electionKey,
      electionTtl: 2,
      pusherId: `${o.id}-${randomUUID().slice(0, 4)}`,
    },
    tuning: { kvBackoff: { baseMs: 50, maxMs: 500 }, kvStaleReadMs: o.staleMs, secrets: [s.token] },
  });
  pusher.start();
  let done = false;
  const end = async (graceful: boolean) => {
    if (done) return;
    done = true;
    if (graceful) await pusher.stop({ flushTimeoutMs: 3_000 });
    else await pusher.abandon();
    etcd.close();
  };
  ctx.cleanups.push(() => end(true));
  return { pusher, crash: () => end(false) };
}

const drifts = async (p: Pusher) =>
  Number(
    /edge_pusher_drift_repairs_total (\d+)/.exec(
      await p.metrics.registry.getSingleMetricAsString("edge_pusher_drift_repairs_total"),
    )?.[1],
  );

/** The first `routes` write whose (history, rev) is before an earlier one's, or null. */
function firstStepBack(writes: readonly CompiledMap[]): string | null {
  for (let i = 1; i < writes.length; i++) {
    const a = writes[i - 1];
    const b = writes[i];
    if (a && b && (b.history < a.history || (b.history === a.history && b.rev < a.rev)))
      return `write #${i} has rev ${b.rev} after rev ${a.rev}`;
  }
  return null;
}

const put = async (key: string, value: unknown) =>
  Number((await ctx.client.put(key).value(JSON.stringify(value)).exec()).header.revision);

describe("pusher under stale KV reads (stand-in with eventual consistency, real etcd)", () => {
  it("counts a stale read as no drift and never moves KV back; an old map after the window is drift", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const windowMs = 4_000;
    const kv = await staleKv({ windowMs, ratio: 1 });
    const { pusher } = startPusher(kv.s, { prefix, electionKey, id: "stale", staleMs: windowMs });
    await waitFor("first push", () => kv.routes());
    let rev = 0;
    for (const pool of ["par-1", "ams-1", "fra-1"]) {
      rev = await put(`${prefix}country/NL`, { primary: pool, fallbacks: [] });
      await waitFor("change pushed", () => (kv.routes()?.rev ?? 0) >= rev);
      await sleep(1_100);
    }
    const staleBefore = kv.s.requests.filter((q) => q.stale).length;
    for (let i = 0; i < 5; i++) {
      pusher.resync();
      await sleep(300);
    }
    await waitFor("stale reads served", () =>
      kv.s.requests.filter((q) => q.stale && q.method === "GET").length > staleBefore ? 1 : 0,
    );
    expect(await drifts(pusher)).toBe(0);
    expect(firstStepBack(kv.routesWrites)).toBeNull();
    const truth = kv.routes();
    expect(truth?.rev).toBe(rev);
    expect(truth?.countries.NL?.pool).toBe("fra-1");

    // Past the window an older map is no stale copy: a late write landed. That is drift, repaired.
    await sleep(windowMs + 500);
    const old = kv.routesWrites.find((m) => m.countries.NL?.pool === "par-1");
    expect(old).toBeDefined();
    kv.s.values.set("routes", JSON.stringify(old));
    await sleep(windowMs + 500); // let the old map be all KV serves
    pusher.resync();
    await waitFor("late write repaired", () => kv.routes()?.countries.NL?.pool === "fra-1");
    expect(await drifts(pusher)).toBe(1);
  }, 60_000);

  it("writes routes only for changes that carry news while every resync reads a stale copy", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const windowMs = 5_000;
    const kv = await staleKv({ windowMs, ratio: 1 });
    const { pusher } = startPusher(kv.s, {
      prefix,
      electionKey,
      id: "news",
      staleMs: windowMs,
      resyncSeconds: 1,
    });
    await waitFor("first push", () => kv.routes());
    let rev = 0;
    for (const pool of ["par-1", "ams-1", "fra-1"]) {
      rev = await put(`${prefix}country/NL`, { primary: pool, fallbacks: [] });
      await waitFor("change pushed", () => (kv.routes()?.rev ?? 0) >= rev);
      await sleep(1_100);
    }
    // Resyncs (every second) inside the window read older copies; then past it, current ones.
    await sleep(3_000);
    const staleGets = kv.s.requests.filter((q) => q.stale && q.method === "GET").length;
    expect(staleGets).toBeGreaterThan(0);
    await sleep(windowMs + 1_500);
    const news = 4; // the first map and three changes
    expect(
      kv.routesWrites.map((m) => `${m.rev}:${m.countries.NL?.pool ?? "-"}`),
      "routes writes",
    ).toHaveLength(news);
    expect(await drifts(pusher)).toBe(0);
    expect(firstStepBack(kv.routesWrites)).toBeNull();
    expect(kv.routes()?.rev).toBe(rev);
    expect(kv.routes()?.countries.NL?.pool).toBe("fra-1");
    console.info(
      `stale-read resyncs: ${kv.routesWrites.length} routes writes for ${news} news, ${staleGets} stale reads`,
    );
  }, 60_000);

  it("a takeover starts from etcd's truth: a stale KV copy neither brings back an old rule nor moves KV back", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix); // DE: fra-1, valid
    const windowMs = 8_000;
    const tokenB = "pusher-b-token-0123456789";
    const kv = await staleKv({ windowMs, ratio: 1, pick: "oldest" }, { tokens: [tokenB] });
    const a = startPusher(kv.s, { prefix, electionKey, id: "a", staleMs: windowMs });
    await waitFor("a leads", () => a.pusher.status.role === "leader");
    const b = startPusher(kv.s, { prefix, electionKey, id: "b", token: tokenB, staleMs: windowMs });
    await waitFor("a pushed DE fra-1", () => kv.routes()?.countries.DE?.pool === "fra-1");
    // Only that map in the window's start: the copy a lagging location will serve the new leader.
    await sleep(windowMs + 500);
    await put(`${prefix}country/DE`, { primary: "par-1", fallbacks: ["ams-1"] });
    await waitFor("a pushed DE par-1", () => kv.routes()?.countries.DE?.pool === "par-1");
    // DE's rule turns invalid: it keeps routing by its last valid rule, par-1 (docs/reference.md §3.4).
    const invalidRev = await put(`${prefix}country/DE`, { primary: "par-1", fallbacks: "oops" });
    await waitFor("a pushed the invalid rule", () => (kv.routes()?.rev ?? 0) >= invalidRev);
    expect(kv.routes()?.countries.DE?.pool).toBe("par-1");
    await waitFor(
      "b compiled it",
      () => (b.pusher.status.document().etcd_revision ?? 0) >= invalidRev,
    );
    const writesBefore = kv.routesWrites.length;
    const getsBefore = kv.s.requests.length;

    await a.crash();
    await waitFor("b leads", () => b.pusher.status.role === "leader", 10_000);
    await waitFor("b wrote", () => kv.routesWrites.length > writesBefore, 10_000);
    const loads = kv.s.requests.slice(getsBefore).filter((q) => q.method === "GET");
    expect(loads[0]?.stale).toBe(true); // b's start-up read got the old copy (DE fra-1)
    const fromB = kv.routesWrites.slice(writesBefore);
    for (const m of fromB) {
      expect(m.rev).toBeGreaterThanOrEqual(invalidRev);
      expect(m.countries.DE?.pool).toBe("par-1");
    }
    // b's lease-length check of KV after taking over reads the stale copy too: still no drift.
    await sleep(3_000);
    expect(await drifts(b.pusher)).toBe(0);
    expect(firstStepBack(kv.routesWrites)).toBeNull();
    expect(kv.routes()?.countries.DE?.pool).toBe("par-1");
    const current = { ...(await compileNow(ctx.client, prefix)), history: 0 };
    expect(current.countries.DE).toBeUndefined(); // without a last valid rule DE would fall to _default
    // Both pushers' tokens spent the one account budget.
    expect(kv.s.budget.byToken.get(tokenB)).toBeGreaterThan(0);
    expect(kv.s.budget.byToken.get(kv.s.token)).toBeGreaterThan(0);
  }, 60_000);

  it("a start-up read answered by a 404 that is not Cloudflare's is an error, not an absent key", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(ctx.client, prefix);
    const kv = await staleKv({ windowMs: 2_000 });
    kv.s.failNext("foreign-404");
    const { pusher } = startPusher(kv.s, { prefix, electionKey, id: "foreign", staleMs: 2_000 });
    await waitFor("pushed", () => kv.routes());
    const seen = kv.s.requests.map((q) => `${q.method} ${q.status}`);
    // Absent would have been written at once; an error is read again first.
    expect(seen.slice(0, 3)).toEqual(["GET 404", "GET 404", "PUT 200"]);
    expect(kv.s.requests[0]?.fault).toBe("foreign-404");
    expect(kv.s.requests[1]?.fault).toBeUndefined();
    expect(pusher.status.document().last_error?.message).toContain(
      "HTTP 404 that is not a Cloudflare API answer",
    );
  }, 30_000);
});
