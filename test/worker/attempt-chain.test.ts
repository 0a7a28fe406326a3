import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import {
  type Blackhole,
  type Origins,
  type ReceivedRequest,
  startBlackhole,
  startOrigins,
} from "../../testkit/origins.js";
import { type EdgeResponse, startWorker, type TestWorker } from "../../testkit/worker.js";
import { buildMap, type MapSpec } from "../cases/routing-cases.js";

/** Long enough that an answer within a test's time can only come from a hedge. */
const TIMEOUT_MS = 30_000;
const HEDGE_MS = 300;
const ONCE_TIMEOUT_MS = 1_500;

/** Waits until `cond()` holds, at most 5 s; true when it did. */
async function until(cond: () => boolean): Promise<boolean> {
  const deadline = Date.now() + 5_000;
  while (!cond() && Date.now() < deadline) await sleep(20);
  return cond();
}

describe(`hedging (ORIGIN_HEDGE_MS=${HEDGE_MS}, ORIGIN_TIMEOUT_MS=${TIMEOUT_MS}, nothing passed over)`, () => {
  let origins: Origins;
  let hole: Blackhole;
  let hole2: Blackhole;
  let worker: TestWorker;
  const SPEC: MapSpec = {
    default: { chain: ["hole-1", "ams-1"], source: "country/_default" },
    countries: {
      SE: { chain: ["slow-1", "hole-2"], source: "country/SE" },
      FR: { chain: ["slow-1", "ams-1"], source: "country/FR" },
    },
  };

  beforeAll(async () => {
    [origins, hole, hole2] = await Promise.all([
      startOrigins(["slow-1", "ams-1"]),
      startBlackhole(),
      startBlackhole(),
    ]);
    // Every request must meet the silent origins: ejection is off (outlier-ejection.test.ts).
    worker = await startWorker({
      ORIGIN_TIMEOUT_MS: String(TIMEOUT_MS),
      ORIGIN_HEDGE_MS: String(HEDGE_MS),
      ORIGIN_ONCE_TIMEOUT_MS: String(ONCE_TIMEOUT_MS),
      MAX_ATTEMPTS: "2",
      EDGE_EJECT_AFTER: "0",
    });
    const urls: Record<string, string> = {
      ...Object.fromEntries(origins.all.map((o) => [o.name, o.url])),
      "hole-1": hole.url,
      "hole-2": hole2.url,
    };
    await worker.putMap(serializeMap(buildMap(SPEC, { rev: 1, originOf: (p) => urls[p] ?? "" })));
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([origins?.close(), hole?.close(), hole2?.close()]);
  });
  beforeEach(() => {
    for (const o of origins.all) o.reset();
  });

  it.each(["GET", "HEAD"])(
    "a %s silent past ORIGIN_HEDGE_MS is asked of the next pool too; the silent attempt is withdrawn",
    async (method) => {
      const before = hole.accepted;
      const res = await worker.dispatch("/seg-1.ts", { country: "DE", method });
      expect(res.status).toBe(200);
      expect(res.headers.get("x-edge-pool")).toBe("ams-1");
      expect(res.headers.get("x-edge-failover")).toBe("hole-1>ams-1");
      expect(res.headers.get("x-edge-degraded")).toBe("origin-failover");
      expect(origins.get("ams-1").requests[0]?.method).toBe(method);
      expect(hole.accepted).toBe(before + 1);
      // answered long before ORIGIN_TIMEOUT_MS, and the silent connection is closed, not left to time out
      expect(res.elapsedMs).toBeGreaterThanOrEqual(HEDGE_MS - 5);
      expect(res.elapsedMs).toBeLessThan(TIMEOUT_MS / 2);
      expect(await until(() => hole.open === 0)).toBe(true);
    },
  );

  it("the first answer wins: a primary that answers after the hedge went out is kept, the hedge withdrawn", async () => {
    origins.get("slow-1").respond(() => ({ status: 200, body: "slow but first", delayMs: 700 }));
    const before = hole2.accepted;
    const res = await worker.dispatch("/seg-2.ts", { country: "SE" });
    expect(res.status).toBe(200);
    expect(res.body).toBe("slow but first");
    expect(res.headers.get("x-edge-pool")).toBe("slow-1");
    // the hedge lost: the response is the first pool's, with no failover to report
    expect(res.headers.get("x-edge-failover")).toBeNull();
    expect(res.headers.get("x-edge-degraded")).toBeNull();
    expect(hole2.accepted).toBe(before + 1);
    expect(await until(() => hole2.open === 0)).toBe(true);
  });

  it("a hedge's 503 does not win over the first pool's later answer", async () => {
    origins.get("slow-1").respond(() => ({ status: 200, body: "slow answer", delayMs: 700 }));
    origins.get("ams-1").failWith(503);
    const res = await worker.dispatch("/seg-3.ts", { country: "FR" });
    expect(res.status).toBe(200);
    expect(res.body).toBe("slow answer");
    expect(res.headers.get("x-edge-pool")).toBe("slow-1");
    expect(origins.get("ams-1").hits).toBe(1);
  });

  it("the hedge answers first and wins over a slow primary", async () => {
    origins.get("slow-1").respond(() => ({ status: 200, body: "too late", delayMs: 2_000 }));
    const res = await worker.dispatch("/seg-4.ts", { country: "FR" });
    expect(res.status).toBe(200);
    expect(res.json<ReceivedRequest>().origin).toBe("ams-1");
    expect(res.headers.get("x-edge-failover")).toBe("slow-1>ams-1");
    expect(res.elapsedMs).toBeLessThan(2_000);
  });

  it("a POST is never hedged: sent once, it waits ORIGIN_ONCE_TIMEOUT_MS and gets a 504", async () => {
    const before = hole.accepted;
    const res = await worker.dispatch("/api", { country: "DE", method: "POST", body: "x" });
    expect(res.status).toBe(504);
    expect(res.headers.get("x-edge-failover")).toBeNull();
    expect(origins.get("ams-1").hits).toBe(0);
    expect(hole.accepted).toBe(before + 1);
  });
});

describe("a black-holed primary with the defaults (ORIGIN_HEDGE_MS=1000, ORIGIN_TIMEOUT_MS=4000, EDGE_EJECT_AFTER=2)", () => {
  let origins: Origins;
  let hole: Blackhole;
  let worker: TestWorker;

  beforeAll(async () => {
    [origins, hole] = await Promise.all([startOrigins(["ams-1"]), startBlackhole()]);
    worker = await startWorker();
    const urls: Record<string, string> = { "hole-1": hole.url, "ams-1": origins.get("ams-1").url };
    const spec: MapSpec = { default: { chain: ["hole-1", "ams-1"], source: "country/_default" } };
    await worker.putMap(serializeMap(buildMap(spec, { rev: 1, originOf: (p) => urls[p] ?? "" })));
  });
  afterAll(async () => {
    await worker?.dispose();
    await Promise.all([origins?.close(), hole?.close()]);
  });

  it("one viewer pays ORIGIN_HEDGE_MS, none pays ORIGIN_TIMEOUT_MS, and the origin is checked out of band", async () => {
    const answers: EdgeResponse[] = [];
    for (let i = 0; i < 12; i++) answers.push(await worker.dispatch(`/seg-${i}.ts`));
    for (const r of answers) {
      expect(r.status).toBe(200);
      expect(r.json<ReceivedRequest>().origin).toBe("ams-1");
      expect(r.headers.get("x-edge-failover")).toBe("hole-1>ams-1");
    }
    const paidHedge = answers.map((r) => r.elapsedMs >= 1_000 - 5);
    expect(paidHedge).toEqual([true, ...Array<boolean>(11).fill(false)]);
    expect(answers[0]?.elapsedMs).toBeLessThan(4_000);
    // the first viewer's attempt and the out-of-band probe the second one set off
    expect(await until(() => hole.accepted >= 2)).toBe(true);
    expect(hole.accepted).toBe(2);
  });
});
