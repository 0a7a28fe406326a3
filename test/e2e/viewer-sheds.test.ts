import type { Etcd3, Lease } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { CompiledMap } from "../../core/index.js";
import { type Origins, startOrigins } from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import {
  kvRoutes,
  type PusherUnderTest,
  uniqueNames,
  useEtcd,
  waitFor,
} from "../pusher/harness.js";

// docs/reference.md §12 "Routing acts per country" through the whole chain: an observer's
// `observed/BR/fra-1` under its own etcd lease → the pusher (its compile loop and recover timer)
// → its KV → the Worker in workerd → loopback origins.

const POOLS = ["fra-1", "ams-1"] as const;
const TOKEN = "viewer-sheds-debug-token";
const VIEWERS = Array.from({ length: 300 }, (_, i) => `viewer-${i}`);
const RECOVER_SECONDS = 2;

const ctx = useEtcd();

describe("sheds by viewers: etcd → pusher → KV → Worker (workerd)", () => {
  let origins: Origins;
  let worker: TestWorker;
  let p: PusherUnderTest;
  let prefix: string;
  let client: Etcd3;
  let observer: Lease;
  let pushedText = "";

  /** Waits until KV's map satisfies `ok`, then hands it to the Worker. */
  const pushed = async (what: string, ok: (m: CompiledMap) => boolean): Promise<CompiledMap> => {
    const map = await waitFor(what, async () => {
      const m = await kvRoutes(p.kv);
      return m && ok(m) ? m : null;
    });
    const text = await p.kv.get("routes");
    if (text && text !== pushedText) {
      await worker.putMap(text);
      pushedText = text;
    }
    return map;
  };
  /** The pool each viewer of `country` is sent to, as the Worker decides it. */
  const picks = async (country: string): Promise<Map<string, number>> => {
    const out = new Map<string, number>();
    for (const v of VIEWERS) {
      const res = await worker.dispatch("/__edge/route", {
        country,
        headers: { "X-Edge-Debug-Token": TOKEN, "X-Edge-Debug-Viewer": v },
      });
      const pool = (res.json() as { route: { pool: string } }).route.pool;
      out.set(pool, (out.get(pool) ?? 0) + 1);
    }
    return out;
  };
  const brShare = (m: CompiledMap) => m.countries.BR?.shed?.[0]?.share;

  beforeAll(async () => {
    origins = await startOrigins(POOLS);
    worker = await startWorker({ DEBUG_TOKEN: TOKEN, MAX_ATTEMPTS: "2" });
    client = ctx.client;
    const names = uniqueNames();
    prefix = names.prefix;
    const put = (k: string, v: unknown) =>
      client.put(`${prefix}${k}`).value(typeof v === "string" ? v : JSON.stringify(v));
    await put("pool/fra-1", {
      origin: origins.get("fra-1").url,
      slow_ms: { low: 800, high: 2000 },
      viewers: true,
    });
    await put("pool/ams-1", { origin: origins.get("ams-1").url });
    for (const pool of POOLS) await put(`health/${pool}`, { status: "healthy", p90_ms: 150 });
    await put("country/_default", { primary: "fra-1", fallbacks: ["ams-1"] });
    await put("country/US", { primary: "fra-1", fallbacks: ["ams-1"] });
    await put("epoch", "1");
    observer = client.lease(30);
    p = ctx.start({ ...names, shedRecoverSeconds: RECOVER_SECONDS });
    // The suite's pusher lives for the whole file; useEtcd stops it after the first test.
    ctx.cleanups.length = 0;
  }, 60_000);
  afterAll(async () => {
    await observer?.revoke().catch(() => {});
    await p?.stop();
    await worker?.dispose();
    await origins?.close();
  });

  it("BR's viewers see fra-1 slow: BR sheds half its viewers to ams-1; US stays on fra-1", async () => {
    await pushed("first map", (m) => m.default.pool === "fra-1");
    const seen = { p90_ms: 1400, samples: 240, error_ratio: 0 };
    await observer.put(`${prefix}observed/BR/fra-1`).value(JSON.stringify(seen)).exec();
    const map = await pushed("BR shed by viewers", (m) => brShare(m) === 50);
    expect(map.countries.BR?.shed).toEqual([{ pool: "fra-1", share: 50, by: "viewers" }]);
    expect(map.countries.US?.shed).toBeUndefined();
    expect(map.default.shed).toBeUndefined();
    expect(map.sheds).toBeUndefined();

    const br = await worker.dispatch("/seg-1.ts", { country: "BR" });
    expect(br.headers.get("x-edge-shed")).toBe("fra-1:50;by=viewers");
    const split = await picks("BR");
    expect(split.get("fra-1") ?? 0).toBeGreaterThan(VIEWERS.length * 0.35);
    expect(split.get("ams-1") ?? 0).toBeGreaterThan(VIEWERS.length * 0.35);
    const us = await worker.dispatch("/seg-1.ts", { country: "US" });
    expect(us.headers.get("x-edge-shed")).toBeNull();
    expect(us.headers.get("x-edge-pool")).toBe("fra-1");
    expect(await picks("US")).toEqual(new Map([["fra-1", VIEWERS.length]]));
    // A country without a rule or an observation follows the default, unshed.
    expect(await picks("FR")).toEqual(new Map([["fra-1", VIEWERS.length]]));
    // The pusher's /status says it, with the figures.
    const reported = await waitFor("/status viewer_sheds", () => {
      const rows = p.pusher.status.document().viewer_sheds;
      return rows.length > 0 ? rows : null;
    });
    expect(reported).toEqual([
      {
        country: "BR",
        pool: "fra-1",
        share: 50,
        p90_ms: 1400,
        samples: 240,
        slow_ms: { low: 800, high: 2000 },
      },
    ]);
  }, 60_000);

  it("the observation ages out: BR steps down one step per recover period, sticky viewers come back", async () => {
    const before = await picks("BR");
    await observer.revoke();
    const t0 = Date.now();
    const forty = await pushed("one step down", (m) => brShare(m) === 40);
    // Not at once: a whole recover period after the observation went.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(RECOVER_SECONDS * 1000 - 200);
    expect(forty.countries.BR?.shed).toEqual([{ pool: "fra-1", share: 40, by: "viewers" }]);
    const after = await picks("BR");
    expect(after.get("fra-1") ?? 0).toBeGreaterThan(before.get("fra-1") ?? 0);
    await pushed("another step", (m) => brShare(m) === 30);
  }, 60_000);
});
