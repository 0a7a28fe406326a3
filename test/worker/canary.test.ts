import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  type Canary,
  compile,
  type ObservationsBody,
  onCanarySide,
  type Snapshot,
  serializeMap,
} from "../../core/index.js";
import { type Origins, startOrigins } from "../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../testkit/worker.js";
import { canaryDoc } from "../helpers/canary-doc.js";
import { observationsWhen } from "../helpers/observations.js";

const POOLS = ["fra-1", "ams-1", "par-1", "gru-2"] as const;
const PREFIX = "/w/";
const DEBUG = "canary-debug-token";
const OBSERVE = "canary-observe-token";
const SIDE = { id: "c8", share: 20 };

describe("a canary through the Worker in workerd (docs/reference.md §13, real loopback origins)", () => {
  let origins: Origins;
  let worker: TestWorker;
  let rev = 700;

  const push = async (canary: Canary | null) => {
    rev += 1;
    const kv: Record<string, unknown> = {
      "country/_default": { primary: "par-1", fallbacks: [] },
      "country/BR": { primary: "fra-1", fallbacks: ["par-1"] },
      "country/DE": { primary: "fra-1", fallbacks: ["ams-1"] },
      ...(canary ? { "canary/current": canary } : {}),
    };
    for (const p of POOLS) {
      kv[`pool/${p}`] = { origin: origins.get(p).url };
      kv[`health/${p}`] = { status: "healthy" };
    }
    const snapshot: Snapshot = {
      revision: rev,
      entries: Object.entries(kv).map(([k, v]) => ({
        key: `${PREFIX}${k}`,
        value: JSON.stringify(v),
      })),
    };
    const opts = {
      carried: null,
      prefix: PREFIX,
      floorPool: "par-1",
      originTemplate: "http://127.0.0.1:9/{pool}",
      now: new Date(),
    };
    await worker.putMap(serializeMap(compile(snapshot, opts).map));
  };
  const moveBr = canaryDoc(
    { "country/BR": { primary: "gru-2", fallbacks: ["fra-1"] } },
    { share: SIDE.share },
  );
  const viewers = Array.from({ length: 400 }, (_, i) => `198.51.${i >> 8}.${i & 255}`);
  const get = (country: string, ip: string, headers: Record<string, string> = {}) =>
    worker.dispatch("/video/seg-1.ts", {
      country,
      headers: { "CF-Connecting-IP": ip, ...headers },
    });

  beforeAll(async () => {
    origins = await startOrigins(POOLS);
    worker = await startWorker({
      DEBUG_TOKEN: DEBUG,
      OBSERVE_TOKEN: OBSERVE,
      OBSERVE_FLUSH_SECONDS: "0",
    });
  });
  afterAll(async () => {
    await worker?.dispose();
    await origins?.close();
  });
  beforeEach(() => {
    for (const o of origins.all) o.reset();
  });

  it("sends the share of a changed route's viewers, stickily, by the canary and says which side", async () => {
    await push(moveBr);
    let onCanary = 0;
    for (const ip of viewers) {
      const want = onCanarySide(SIDE, ip);
      for (let round = 0; round < 2; round++) {
        const res = await get("BR", ip);
        expect(res.status).toBe(200);
        expect(res.headers.get("x-edge-pool")).toBe(want ? "gru-2" : "fra-1");
        expect(res.headers.get("x-edge-canary")).toBe(`c8:${want ? "canary" : "stable"}`);
      }
      if (want) onCanary++;
    }
    expect(origins.get("gru-2").hits).toBe(2 * onCanary);
    // 400 viewers at 20 %: 80 ± 30 is over three standard deviations.
    expect(onCanary).toBeGreaterThan(50);
    expect(onCanary).toBeLessThan(110);
  });

  it("leaves routes the canary does not change alone: no X-Edge-Canary", async () => {
    await push(moveBr);
    for (const ip of viewers.slice(0, 50)) {
      const de = await get("DE", ip);
      expect(de.headers.get("x-edge-pool")).toBe("fra-1");
      expect(de.headers.get("x-edge-canary")).toBeNull();
      expect((await get("FR", ip)).headers.get("x-edge-canary")).toBeNull();
    }
    expect(origins.get("gru-2").hits).toBe(0);
  });

  it("no canary in the map: every BR viewer takes the stable route, whatever the client claims", async () => {
    await push(null);
    for (const ip of viewers.slice(0, 100)) {
      const res = await get("BR", ip, { "X-Edge-Canary": "c8:canary", x_edge_canary: "c8:canary" });
      expect(res.headers.get("x-edge-pool")).toBe("fra-1");
      expect(res.headers.get("x-edge-canary")).toBeNull();
    }
    expect(origins.get("gru-2").hits).toBe(0);
  });

  it("an origin's own X-Edge-Canary never reaches the viewer, and the origin hears none from the client", async () => {
    await push(moveBr);
    origins.get("fra-1").respond(() => ({
      status: 200,
      body: "x",
      headers: { "X-Edge-Canary": "c8:canary" },
    }));
    const stableIp = viewers.find((v) => !onCanarySide(SIDE, v)) ?? "";
    const res = await get("BR", stableIp, { "X-Edge-Canary": "forged" });
    expect(res.headers.get("x-edge-canary")).toBe("c8:stable");
    const seen = origins.get("fra-1").requests.at(-1);
    expect(seen?.headers["x-edge-canary"]).toBeUndefined();
    origins.get("fra-1").respond(null);
  });

  it("the debug route says the side; X-Edge-Debug-Viewer picks it only with the token", async () => {
    await push(moveBr);
    const canaryViewer = viewers.find((v) => onCanarySide(SIDE, v)) ?? "";
    const stableIp = viewers.find((v) => !onCanarySide(SIDE, v)) ?? "";
    const route = await worker.dispatch("/__edge/route", {
      country: "BR",
      headers: { "X-Edge-Debug-Token": DEBUG, "X-Edge-Debug-Viewer": canaryViewer },
    });
    const body = route.json<{ canary: string | null; route: { pool: string } }>();
    expect(body).toMatchObject({ canary: "c8:canary", route: { pool: "gru-2" } });
    const spoofed = await get("BR", stableIp, { "X-Edge-Debug-Viewer": canaryViewer });
    expect(spoofed.headers.get("x-edge-canary")).toBe("c8:stable");
  });

  it("keeps observations per side", async () => {
    await push(moveBr);
    const canaryIps = viewers.filter((v) => onCanarySide(SIDE, v)).slice(0, 7);
    const stableIps = viewers.filter((v) => !onCanarySide(SIDE, v)).slice(0, 11);
    const tally = (b: ObservationsBody, cc: string) => {
      const out: Record<string, number> = {};
      for (const r of b.rows.filter((x) => x.country === cc))
        out[`${r.pool} ${r.side ?? "-"}`] = (out[`${r.pool} ${r.side ?? "-"}`] ?? 0) + r.requests;
      return out;
    };
    const before = await observationsWhen(worker, OBSERVE, () => true);
    const total = (b: ObservationsBody) => b.rows.reduce((n, r) => n + r.requests, 0);
    for (const ip of [...canaryIps, ...stableIps]) await get("AR", ip);
    for (const ip of [...canaryIps, ...stableIps]) await get("BR", ip);
    const after = await observationsWhen(worker, OBSERVE, (b) => total(b) >= total(before) + 36);
    const delta = (cc: string) => {
      const a = tally(after, cc);
      const b = tally(before, cc);
      return Object.fromEntries(
        Object.entries(a)
          .map(([k, n]) => [k, n - (b[k] ?? 0)] as const)
          .filter(([, n]) => n > 0),
      );
    };
    expect(delta("BR")).toEqual({ "fra-1 c8:stable": 11, "gru-2 c8:canary": 7 });
    expect(delta("AR")).toEqual({ "par-1 -": 18 });
  });
});
