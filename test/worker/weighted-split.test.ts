import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  compile,
  pickWeighted,
  type RouteWeight,
  type Snapshot,
  serializeMap,
} from "../../core/index.js";
import { type Origins, startOrigins } from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";

const POOLS = ["fra-1", "ams-1", "par-1"] as const;
const PREFIX = "/w/";
const TOKEN = "split-debug-token";
const W8020: RouteWeight[] = [
  { pool: "fra-1", weight: 80 },
  { pool: "ams-1", weight: 20 },
];

describe("weighted splits through the Worker in workerd (real loopback origins)", () => {
  let origins: Origins;
  let worker: TestWorker;
  let cookieWorker: TestWorker;
  let rev = 500;

  /** Compiles intent + health with the real compiler, origins on loopback, into both Workers. */
  const push = async (kv: Record<string, unknown>, unhealthy: readonly string[] = []) => {
    rev += 1;
    const entries: Record<string, unknown> = {
      "country/_default": { primary: "par-1", fallbacks: [] },
      ...kv,
    };
    for (const p of POOLS) {
      entries[`pool/${p}`] = { origin: origins.get(p).url };
      if (!unhealthy.includes(p)) entries[`health/${p}`] = { status: "healthy" };
    }
    const snapshot: Snapshot = {
      revision: rev,
      entries: Object.entries(entries).map(([k, v]) => ({
        key: `${PREFIX}${k}`,
        value: JSON.stringify(v),
      })),
    };
    const text = serializeMap(
      compile(snapshot, {
        carried: null,
        prefix: PREFIX,
        floorPool: "par-1",
        originTemplate: "http://127.0.0.1:9/{pool}",
        now: new Date(),
      }).map,
    );
    await worker.putMap(text);
    await cookieWorker.putMap(text);
  };
  const weightedDe = {
    "country/DE": {
      primary: "fra-1",
      fallbacks: ["ams-1", "par-1"],
      weights: { "fra-1": 80, "ams-1": 20 },
    },
  };
  const get = (w: TestWorker, headers: Record<string, string>, country = "DE") =>
    w.dispatch("/video/seg-1.ts", { country, headers });

  beforeAll(async () => {
    origins = await startOrigins(POOLS);
    worker = await startWorker({ DEBUG_TOKEN: TOKEN, MAX_ATTEMPTS: "2" });
    const withCookie: Record<string, string> = { AFFINITY_COOKIE: "sid", DEBUG_TOKEN: TOKEN };
    cookieWorker = await startWorker(withCookie);
  });
  afterAll(async () => {
    await worker?.dispose();
    await cookieWorker?.dispose();
    await origins?.close();
  });
  beforeEach(() => {
    for (const o of origins.all) o.reset();
  });

  it("sends each viewer (CF-Connecting-IP) to its rendezvous pool, ~80/20, with X-Edge-Split", async () => {
    await push(weightedDe);
    const served: Record<string, number> = {};
    for (let i = 0; i < 400; i++) {
      const ip = `198.51.${i >> 8}.${i & 255}`;
      const res = await get(worker, { "CF-Connecting-IP": ip });
      expect(res.status).toBe(200);
      const pool = res.headers.get("x-edge-pool") ?? "";
      expect(pool).toBe(pickWeighted(ip, W8020));
      expect(res.json<{ origin: string }>().origin).toBe(pool);
      expect(res.headers.get("x-edge-split")).toBe("fra-1:80,ams-1:20");
      expect(res.headers.get("x-edge-source")).toBe("country/DE");
      served[pool] = (served[pool] ?? 0) + 1;
    }
    expect(origins.get("fra-1").hits + origins.get("ams-1").hits).toBe(400);
    expect(origins.get("par-1").hits).toBe(0);
    // 400 viewers: 80 % ± 8 points is over four standard deviations.
    expect(served["fra-1"] ?? 0).toBeGreaterThan(288);
    expect(served["fra-1"] ?? 0).toBeLessThan(352);
  });

  it("keys on the AFFINITY_COOKIE value when set and present, whatever the IP", async () => {
    await push(weightedDe);
    const sids = Array.from({ length: 40 }, (_, i) => `session-${i}`);
    for (const sid of sids) {
      const want = pickWeighted(sid, W8020);
      for (const ip of ["192.0.2.1", "192.0.2.77", "2001:db8::9"]) {
        const res = await get(cookieWorker, {
          Cookie: `lang=de; sid=${sid}`,
          "CF-Connecting-IP": ip,
        });
        expect(res.headers.get("x-edge-pool")).toBe(want);
      }
    }
    // No such cookie: the IP decides. Without AFFINITY_COOKIE the cookie means nothing.
    const ip = "192.0.2.200";
    const noCookie = await get(cookieWorker, { Cookie: "lang=de", "CF-Connecting-IP": ip });
    expect(noCookie.headers.get("x-edge-pool")).toBe(pickWeighted(ip, W8020));
    const ignored = sids.find((s) => pickWeighted(s, W8020) !== pickWeighted(ip, W8020)) ?? "";
    const plain = await get(worker, { Cookie: `sid=${ignored}`, "CF-Connecting-IP": ip });
    expect(plain.headers.get("x-edge-pool")).toBe(pickWeighted(ip, W8020));
  });

  it("X-Edge-Debug-Viewer forces the key only with the debug token", async () => {
    await push(weightedDe);
    const ip = "203.0.113.5";
    const byIp = pickWeighted(ip, W8020);
    const other = Array.from({ length: 100 }, (_, i) => `v-${i}`).find(
      (v) => pickWeighted(v, W8020) !== byIp,
    );
    if (!other) throw new Error("no viewer with the other pool");
    const forced = await get(worker, {
      "CF-Connecting-IP": ip,
      "X-Edge-Debug-Viewer": other,
      "X-Edge-Debug-Token": TOKEN,
    });
    expect(forced.headers.get("x-edge-pool")).toBe(pickWeighted(other, W8020));
    const spoofed = await get(worker, {
      "CF-Connecting-IP": ip,
      "X-Edge-Debug-Viewer": other,
      "X-Edge-Debug-Token": "wrong",
    });
    expect(spoofed.headers.get("x-edge-pool")).toBe(byIp);
    const route = await worker.dispatch("/__edge/route", {
      country: "DE",
      headers: { "X-Edge-Debug-Token": TOKEN, "X-Edge-Debug-Viewer": other },
    });
    expect(route.json<{ route: { pool: string } }>().route.pool).toBe(pickWeighted(other, W8020));
  });

  it("fails over from the weighted pick along the rest of the chain", async () => {
    await push(weightedDe);
    const viewers = Array.from({ length: 200 }, (_, i) => `fail-${i}`);
    const onAms = viewers.find((v) => pickWeighted(v, W8020) === "ams-1") ?? "";
    const onFra = viewers.find((v) => pickWeighted(v, W8020) === "fra-1") ?? "";
    origins.get("ams-1").failWith(503);
    const a = await get(worker, { "CF-Connecting-IP": onAms });
    expect(a.status).toBe(200);
    expect(a.headers.get("x-edge-pool")).toBe("fra-1");
    expect(a.headers.get("x-edge-failover")).toBe("ams-1>fra-1");
    expect(a.headers.get("x-edge-degraded")).toBe("origin-failover");
    origins.get("ams-1").failWith(null);
    origins.get("fra-1").failWith(503);
    const f = await get(worker, { "CF-Connecting-IP": onFra });
    expect(f.headers.get("x-edge-pool")).toBe("ams-1");
    expect(f.headers.get("x-edge-failover")).toBe("fra-1>ams-1");
    origins.get("fra-1").failWith(null);
  });

  it("only the unhealthy pool's viewers move; no weights (and no X-Edge-Split) when none is healthy", async () => {
    const three = {
      "country/DE": {
        primary: "fra-1",
        fallbacks: ["ams-1", "par-1"],
        weights: { "fra-1": 50, "ams-1": 30, "par-1": 20 },
      },
    };
    const viewers = Array.from({ length: 300 }, (_, i) => `move-${i}`);
    const poolOf = async (v: string) => {
      const res = await get(worker, { "CF-Connecting-IP": v });
      return { pool: res.headers.get("x-edge-pool"), split: res.headers.get("x-edge-split") };
    };
    await push(three);
    const before = new Map<string, string | null>();
    for (const v of viewers) before.set(v, (await poolOf(v)).pool);
    expect(new Set(before.values())).toEqual(new Set(["fra-1", "ams-1", "par-1"]));
    await push(three, ["ams-1"]);
    let moved = 0;
    for (const v of viewers) {
      const now = await poolOf(v);
      expect(now.split).toBe("fra-1:71,par-1:29");
      if (before.get(v) === "ams-1") {
        expect(now.pool).not.toBe("ams-1");
        moved++;
      } else expect(now.pool).toBe(before.get(v));
    }
    expect(moved).toBeGreaterThan(0);
    // Both weighted pools down: the route keeps its unweighted fallback and loses its weights.
    await push(weightedDe, ["fra-1", "ams-1"]);
    const none = await get(worker, { "CF-Connecting-IP": "198.51.100.1" });
    expect(none.headers.get("x-edge-pool")).toBe("par-1");
    expect(none.headers.get("x-edge-degraded")).toBeNull();
    expect(none.headers.get("x-edge-split")).toBeNull();
    // An unweighted route never carries the header.
    const plain = await get(worker, { "CF-Connecting-IP": "198.51.100.1" }, "US");
    expect(plain.headers.get("x-edge-split")).toBeNull();
  });

  it("routes continent rules through the Worker in the documented order", async () => {
    await push({
      "continent/EU": { primary: "ams-1", fallbacks: ["par-1"] },
      "country/DE": { primary: "fra-1", fallbacks: [] },
      "override/IT": { primary: "par-1", fallbacks: [] },
    });
    const at = async (cc: string) => {
      const r = await get(worker, { "CF-Connecting-IP": "192.0.2.9" }, cc);
      return [
        r.headers.get("x-edge-pool"),
        r.headers.get("x-edge-source"),
        r.json<{ origin: string }>().origin,
      ];
    };
    expect(await at("FR")).toEqual(["ams-1", "continent/EU", "ams-1"]);
    expect(await at("RU")).toEqual(["ams-1", "continent/EU", "ams-1"]);
    expect(await at("DE")).toEqual(["fra-1", "country/DE", "fra-1"]);
    expect(await at("IT")).toEqual(["par-1", "override/IT", "par-1"]);
    expect(await at("US")).toEqual(["par-1", "country/_default", "par-1"]);
    await push({
      "continent/EU": { primary: "ams-1", fallbacks: ["par-1"] },
      "override/EU": { primary: "fra-1", fallbacks: [] },
      "country/DE": { primary: "par-1", fallbacks: [] },
    });
    expect(await at("FR")).toEqual(["fra-1", "override/EU", "fra-1"]);
    expect(await at("DE")).toEqual(["par-1", "country/DE", "par-1"]);
  });
});
