import { setTimeout as sleep } from "node:timers/promises";
import type { Etcd3, Lease } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CompiledMap, parseMap } from "../../core/index.js";
import { type Origins, startOrigins } from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import {
  kvRevision,
  kvRoutes,
  type PusherUnderTest,
  uniqueNames,
  useEtcd,
  waitFor,
} from "../pusher/harness.js";

// docs/reference.md §9 through the whole chain: checker keys under real etcd leases → the pusher
// (its own compile loop and recover timer) → its KV → the Worker in workerd → loopback origins.

const POOLS = ["fra-1", "ams-1", "par-1"] as const;
const CHECKERS = ["a", "b", "c"] as const;
const TOKEN = "slow-pools-debug-token";
const VIEWERS = Array.from({ length: 400 }, (_, i) => `viewer-${i}`);
const RECOVER_SECONDS = 2;
const SLOW = { low: 800, high: 2000 };

const ctx = useEtcd();

describe("slow pools and checker quorum: etcd → pusher → KV → Worker (workerd)", () => {
  let origins: Origins;
  let worker: TestWorker;
  let p: PusherUnderTest;
  let prefix: string;
  let client: Etcd3;
  const leases = new Map<string, Lease>();
  let pushedText = "";

  /** One checker's key, under its own lease, as `edgectl heartbeat POOL --checker NAME` writes. */
  const check = async (pool: string, checker: string, value: Record<string, unknown>) => {
    const name = `${pool}/${checker}`;
    let lease = leases.get(name);
    if (!lease) {
      lease = client.lease(30);
      leases.set(name, lease);
    }
    await lease.put(`${prefix}health/${name}`).value(JSON.stringify(value)).exec();
  };
  const allCheck = async (pool: string, value: Record<string, unknown>) => {
    for (const c of CHECKERS) await check(pool, c, value);
  };
  /** etcd's revision now: what KV must reflect once the pusher has seen every change so far. */
  const etcdRevision = async () =>
    Number((await client.get(`${prefix}epoch`).exec()).header.revision);
  /**
   * Waits until KV reflects etcd revision `atRev` (`kvRevision`: `routes` is rewritten only when
   * routing changes, `meta` confirms each revision) and its map satisfies `ok`, then hands the
   * map to the Worker.
   */
  const pushed = async (
    what: string,
    ok: (m: CompiledMap) => boolean,
    atRev = 0,
  ): Promise<CompiledMap> => {
    const map = await waitFor(what, async () => {
      const m = await kvRoutes(p.kv);
      return m && m.rev > 0 && ok(m) && (await kvRevision(p.kv)) >= atRev ? m : null;
    });
    const text = await p.kv.get("routes");
    // A recover step changes the map at the same revision: compare the documents.
    if (text && text !== pushedText) {
      await worker.putMap(text);
      pushedText = text;
    }
    return map;
  };
  /** The pool each viewer of DE is sent to, as the Worker decides it. */
  const picks = async (): Promise<string[]> => {
    const out: string[] = [];
    for (const v of VIEWERS) {
      const res = await worker.dispatch("/__edge/route", {
        country: "DE",
        headers: { "X-Edge-Debug-Token": TOKEN, "X-Edge-Debug-Viewer": v },
      });
      out.push((res.json() as { route: { pool: string } }).route.pool);
    }
    return out;
  };
  const de = (m: CompiledMap) => m.countries.DE;

  beforeAll(async () => {
    origins = await startOrigins(POOLS);
    worker = await startWorker({ DEBUG_TOKEN: TOKEN, MAX_ATTEMPTS: "2" });
    client = ctx.client;
    const names = uniqueNames();
    prefix = names.prefix;
    const put = (k: string, v: unknown) =>
      client.put(`${prefix}${k}`).value(typeof v === "string" ? v : JSON.stringify(v));
    for (const pool of POOLS) {
      const slow = pool === "fra-1" ? { slow_ms: SLOW } : {};
      await put(`pool/${pool}`, { origin: origins.get(pool).url, ...slow });
      await allCheck(pool, { status: "healthy", p90_ms: 200, samples: 20 });
    }
    await put("country/_default", { primary: "ams-1", fallbacks: ["par-1"] });
    await put("country/DE", { primary: "fra-1", fallbacks: ["ams-1", "par-1"] });
    await put("epoch", "1");
    p = ctx.start({ ...names, shedRecoverSeconds: RECOVER_SECONDS });
    // The suite's pusher lives for the whole file; useEtcd stops it after the first test.
    ctx.cleanups.length = 0;
  }, 60_000);
  afterAll(async () => {
    for (const l of leases.values()) await l.revoke().catch(() => {});
    await p?.stop();
    await worker?.dispose();
    await origins?.close();
  });

  it("three checkers: one says unhealthy, or its key disappears: no viewer moves", async () => {
    await pushed("DE on fra-1", (m) => de(m)?.pool === "fra-1");
    const before = await picks();
    expect(new Set(before)).toEqual(new Set(["fra-1"]));

    await check("fra-1", "c", { status: "unhealthy" });
    const partitioned = await pushed(
      "checker c's report compiled",
      () => true,
      await etcdRevision(),
    );
    expect(de(partitioned)?.pool).toBe("fra-1");
    expect(await picks()).toEqual(before);

    await leases.get("fra-1/c")?.revoke();
    leases.delete("fra-1/c");
    const killed = await pushed("checker c gone", () => true, await etcdRevision());
    expect(de(killed)?.pool).toBe("fra-1");
    expect(await picks()).toEqual(before);
    const res = await worker.dispatch("/seg-1.ts", { country: "DE" });
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
  }, 60_000);

  it("a majority says down: the pool drops", async () => {
    await check("fra-1", "c", { status: "healthy", p90_ms: 200 });
    await pushed("c back", () => true, await etcdRevision());
    await check("fra-1", "a", { status: "unhealthy" });
    await check("fra-1", "b", { status: "unhealthy" });
    const down = await pushed("fra-1 dropped", (m) => de(m)?.pool === "ams-1");
    expect(de(down)?.chain.map((l) => l.pool)).toEqual(["ams-1", "par-1"]);
    expect(new Set(await picks())).toEqual(new Set(["ams-1"]));
    const res = await worker.dispatch("/seg-1.ts", { country: "DE" });
    expect(res.headers.get("x-edge-pool")).toBe("ams-1");
    expect(res.headers.get("x-edge-shed")).toBeNull();
  }, 60_000);

  it("p90 1400 with watermarks 800/2000: share 50, about half the viewers move, the same ones every time", async () => {
    await allCheck("fra-1", { status: "healthy", p90_ms: 1400, samples: 20 });
    const map = await pushed("fra-1 shedding", (m) => de(m)?.shed !== undefined);
    expect(de(map)?.shed).toEqual([{ pool: "fra-1", share: 50 }]);
    const first = await picks();
    const moved = first.filter((x) => x !== "fra-1");
    expect(new Set(moved)).toEqual(new Set(["ams-1"]));
    expect(moved.length / VIEWERS.length).toBeGreaterThan(0.4);
    expect(moved.length / VIEWERS.length).toBeLessThan(0.6);
    expect(await picks()).toEqual(first);

    // Served for real: the header and the origin agree with the pick.
    const i = first.indexOf("ams-1");
    const res = await worker.dispatch("/seg-2.ts", {
      country: "DE",
      headers: { "X-Edge-Debug-Token": TOKEN, "X-Edge-Debug-Viewer": VIEWERS[i] ?? "" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edge-shed")).toBe("fra-1:50");
    expect(res.headers.get("x-edge-pool")).toBe("ams-1");
    expect((res.json() as { origin: string }).origin).toBe("ams-1");
    expect(res.headers.get("x-edge-degraded")).toBeNull();

    // The pusher's /status says it too.
    expect(p.pusher.status.document().pools.find((r) => r.pool === "fra-1")).toEqual({
      pool: "fra-1",
      status: "healthy",
      p90_ms: 1400,
      live_checkers: 3,
      healthy_checkers: 3,
      quorum: 2,
      slow_ms: SLOW,
      shed: 50,
    });
  }, 60_000);

  it("p90 back at 300: the share steps down one step per recover period, with no etcd change", async () => {
    const fifty = await picks();
    await allCheck("fra-1", { status: "healthy", p90_ms: 300, samples: 20 });
    const etcdRev = Number((await client.get(`${prefix}epoch`).exec()).header.revision);
    const seen: { share: number; at: number }[] = [];
    let fortyText = "";
    // Every step as KV shows it, sampled without pause (a step lasts RECOVER_SECONDS).
    const deadline = Date.now() + RECOVER_SECONDS * 1000 * 10;
    while (seen.at(-1)?.share !== 0 && Date.now() < deadline) {
      const text = (await p.kv.get("routes")) ?? "";
      const m = parseMap(text);
      const share = m?.sheds?.["fra-1"]?.share ?? 0;
      if (m && share < 50 && seen.at(-1)?.share !== share) {
        // When the pusher compiled the step (the shed's own stamp; the map's once it is over).
        seen.push({ share, at: Date.parse(m.sheds?.["fra-1"]?.at ?? m.compiled_at) });
        if (share === 40) fortyText = text;
      }
      await sleep(20);
    }
    pushedText = fortyText;
    await worker.putMap(fortyText);
    const forty = await picks();
    // Only viewers that had moved come back; nobody else moves.
    expect(forty.filter((pool, k) => pool !== fifty[k]).length).toBeGreaterThan(0);
    forty.forEach((pool, k) => {
      if (pool !== fifty[k]) expect([fifty[k], pool]).toEqual(["ams-1", "fra-1"]);
    });
    expect(seen.map((s) => s.share)).toEqual([40, 30, 20, 10, 0]);
    const gaps = seen.slice(1).map((s, k) => s.at - (seen[k]?.at ?? 0));
    for (const gap of gaps) {
      expect(gap).toBeGreaterThanOrEqual(RECOVER_SECONDS * 1000 - 200);
      expect(gap).toBeLessThan(RECOVER_SECONDS * 1000 + 1000);
    }
    // The steps came from the pusher's own timer: etcd did not move.
    const now = Number((await client.get(`${prefix}epoch`).exec()).header.revision);
    expect(now).toBe(etcdRev);
    const done = await pushed("no shed", (m) => m.sheds === undefined);
    expect(de(done)?.weights).toBeUndefined();
    expect(new Set(await picks())).toEqual(new Set(["fra-1"]));
  }, 60_000);

  it("every pool slow: nothing is shed, and the route is degraded all-pools-slow", async () => {
    const put = (k: string, v: unknown) => client.put(`${prefix}${k}`).value(JSON.stringify(v));
    for (const pool of ["ams-1", "par-1"] as const)
      await put(`pool/${pool}`, { origin: origins.get(pool).url, slow_ms: SLOW });
    for (const pool of POOLS) await allCheck(pool, { status: "healthy", p90_ms: 2600 });
    const map = await pushed("all pools slow", (m) => de(m)?.degraded === "all-pools-slow");
    expect(de(map)?.shed).toBeUndefined();
    expect(de(map)?.weights).toBeUndefined();
    expect(new Set(await picks())).toEqual(new Set(["fra-1"]));
    const res = await worker.dispatch("/seg-3.ts", { country: "DE" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-edge-pool")).toBe("fra-1");
    expect(res.headers.get("x-edge-degraded")).toBe("all-pools-slow");
    expect(res.headers.get("x-edge-shed")).toBeNull();
  }, 60_000);
});
