import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../core/index.js";
import {
  type Blackhole,
  type Origins,
  type ReceivedRequest,
  startBlackhole,
  startOrigins,
} from "../../testkit/origins.js";
import { startTcpProxy, type TcpProxy } from "../../testkit/tcp-proxy.js";
import { type EdgeResponse, startWorker, type TestWorker } from "../../testkit/worker.js";
import { type EjectionSettings, OutlierEjection } from "../../worker/outlier-ejection.js";
import { buildMap, type MapSpec } from "../cases/routing-cases.js";

describe("OutlierEjection (one isolate's memory, a fake clock)", () => {
  const s: EjectionSettings = { ejectAfter: 2, ejectMs: 10_000 };
  const clock = { t: 0 };
  const fresh = () => new OutlierEjection(() => clock.t);

  it("ejects after ejectAfter failures in a row, and a response in between resets the count", () => {
    const e = fresh();
    e.record("a", true, s);
    e.record("a", false, s);
    e.record("a", true, s);
    expect(e.admit("a", s)).toBe("use");
    e.record("a", true, s);
    expect(e.admit("a", s)).toBe("skip");
    expect(e.admit("b", s)).toBe("use");
  });

  it("lets one request probe after ejectMs; a failed probe ejects again, a good one restores", () => {
    const e = fresh();
    clock.t = 1000;
    e.record("a", true, s);
    e.record("a", true, s);
    clock.t = 10_999;
    expect(e.admit("a", s)).toBe("skip");
    clock.t = 11_000;
    expect(e.admit("a", s)).toBe("use");
    // while the probe runs, everyone else passes the origin over
    expect(e.admit("a", s)).toBe("skip");
    clock.t = 11_500;
    e.record("a", true, s);
    clock.t = 21_499;
    expect(e.admit("a", s)).toBe("skip");
    clock.t = 21_500;
    expect(e.admit("a", s)).toBe("use");
    e.record("a", false, s);
    expect(e.admit("a", s)).toBe("use");
    // restored: it takes ejectAfter failures again
    e.record("a", true, s);
    expect(e.admit("a", s)).toBe("use");
  });

  it("a probe that never reports back costs one more period, not the origin", () => {
    const e = fresh();
    clock.t = 0;
    e.record("a", true, s);
    e.record("a", true, s);
    clock.t = 10_000;
    expect(e.admit("a", s)).toBe("use");
    clock.t = 19_999;
    expect(e.admit("a", s)).toBe("skip");
    clock.t = 20_000;
    expect(e.admit("a", s)).toBe("use");
  });

  it("EDGE_EJECT_AFTER=0 never ejects", () => {
    const e = fresh();
    const off = { ejectAfter: 0, ejectMs: 10_000 };
    for (let i = 0; i < 10; i++) e.record("a", true, off);
    expect(e.admit("a", off)).toBe("use");
  });
});

const TIMEOUT_MS = 400;
const EJECT_SECONDS = 2;

describe(`outlier ejection in workerd (ORIGIN_TIMEOUT_MS=${TIMEOUT_MS}, EDGE_EJECT_AFTER=2, EDGE_EJECT_SECONDS=${EJECT_SECONDS})`, () => {
  let origins: Origins;
  let hole: Blackhole;
  let hole2: Blackhole;
  let hole3: Blackhole;
  let gate: TcpProxy;
  let worker: TestWorker;
  const SPEC: MapSpec = {
    default: { chain: ["hole-1", "ams-1"], source: "country/_default" },
    countries: {
      NL: { chain: ["hole-2", "hole-3"], source: "country/NL" },
      FR: { chain: ["fra-1", "ams-1"], source: "country/FR" },
      BE: { chain: ["hole-1", "ams-1", "par-1"], source: "country/BE" },
    },
  };

  beforeAll(async () => {
    [origins, hole, hole2, hole3] = await Promise.all([
      startOrigins(["fra-1", "ams-1", "par-1"]),
      startBlackhole(),
      startBlackhole(),
      startBlackhole(),
    ]);
    gate = await startTcpProxy(origins.get("fra-1").port);
    worker = await startWorker({
      ORIGIN_TIMEOUT_MS: String(TIMEOUT_MS),
      MAX_ATTEMPTS: "2",
      EDGE_EJECT_AFTER: "2",
      EDGE_EJECT_SECONDS: String(EJECT_SECONDS),
    });
    const urls: Record<string, string> = {
      ...Object.fromEntries(origins.all.map((o) => [o.name, o.url])),
      "fra-1": gate.endpoint,
      "hole-1": hole.url,
      "hole-2": hole2.url,
      "hole-3": hole3.url,
    };
    await worker.putMap(serializeMap(buildMap(SPEC, { rev: 1, originOf: (p) => urls[p] ?? "" })));
  });
  afterAll(async () => {
    await worker?.dispose();
    await gate?.close();
    await Promise.all([origins?.close(), hole?.close(), hole2?.close(), hole3?.close()]);
  });

  /** Sequential requests, one at a time, as a player fetches segments. */
  async function sequential(n: number, country: string): Promise<EdgeResponse[]> {
    const out: EdgeResponse[] = [];
    for (let i = 0; i < n; i++) out.push(await worker.dispatch(`/seg-${i}.ts`, { country }));
    return out;
  }
  const paidTimeout = (r: EdgeResponse) => r.elapsedMs >= TIMEOUT_MS - 5;

  it("a black-holed primary: at most EDGE_EJECT_AFTER requests pay the timeout, then one probe per period", async () => {
    const first = await sequential(8, "DE");
    for (const r of first) {
      expect(r.status).toBe(200);
      expect(r.json<ReceivedRequest>().origin).toBe("ams-1");
      expect(r.headers.get("x-edge-failover")).toBe("hole-1>ams-1");
      expect(r.headers.get("x-edge-degraded")).toBe("origin-failover");
    }
    expect(first.map(paidTimeout)).toEqual([true, true, false, false, false, false, false, false]);
    // passed over without a connection
    expect(hole.accepted).toBe(2);

    await sleep(EJECT_SECONDS * 1000 + 100);
    const after = await sequential(4, "DE");
    // one request probes it again, fails, and the origin is ejected for another period
    expect(after.map(paidTimeout)).toEqual([true, false, false, false]);
    expect(hole.accepted).toBe(3);
    expect(after.every((r) => r.json<ReceivedRequest>().origin === "ams-1")).toBe(true);
  });

  it("an ejected pool costs no attempt: the rest of the chain still gets MAX_ATTEMPTS", async () => {
    // hole-1 is ejected by the test above; ams-1 answers 503, so par-1 is the second attempt
    origins.get("ams-1").failWith(503);
    try {
      const r = await worker.dispatch("/x", { country: "BE" });
      expect(r.status).toBe(200);
      expect(r.json<ReceivedRequest>().origin).toBe("par-1");
      expect(r.headers.get("x-edge-failover")).toBe("hole-1>ams-1>par-1");
      expect(paidTimeout(r)).toBe(false);
    } finally {
      origins.get("ams-1").reset();
    }
  });

  it("sends a POST to the next pool when its route's pool is ejected (no request reached it)", async () => {
    const before = hole.accepted;
    const r = await worker.dispatch("/api", { country: "DE", method: "POST", body: "x" });
    expect(r.status).toBe(200);
    expect(r.json<ReceivedRequest>()).toMatchObject({ origin: "ams-1", body: "x" });
    expect(hole.accepted).toBe(before);
  });

  it("never ejects a whole chain: when every pool is ejected, the first is tried anyway", async () => {
    // NL: hole-2, then hole-3; two requests eject both
    const ejecting = await sequential(2, "NL");
    expect(ejecting.map((r) => r.headers.get("x-edge-failover"))).toEqual([
      "hole-2>hole-3",
      "hole-2>hole-3",
    ]);
    const before = { h2: hole2.accepted, h3: hole3.accepted };
    const r = await worker.dispatch("/x", { country: "NL" });
    expect(r.status).toBe(504);
    expect(r.headers.get("x-edge-pool")).toBe("hole-2");
    expect(r.headers.get("x-edge-failover")).toBeNull();
    expect(paidTimeout(r)).toBe(true);
    expect({ h2: hole2.accepted, h3: hole3.accepted }).toEqual({
      h2: before.h2 + 1,
      h3: before.h3,
    });
  });

  it("refusals eject too, and a successful probe brings the origin back", async () => {
    gate.disconnect();
    const refused = await sequential(4, "FR");
    expect(refused.every((r) => r.json<ReceivedRequest>().origin === "ams-1")).toBe(true);
    expect(origins.get("fra-1").hits).toBe(0);
    gate.accept();
    // still ejected: passed over although it would answer now
    expect((await worker.dispatch("/x", { country: "FR" })).json<ReceivedRequest>().origin).toBe(
      "ams-1",
    );
    await sleep(EJECT_SECONDS * 1000 + 100);
    const back = await sequential(3, "FR");
    expect(back.map((r) => r.json<ReceivedRequest>().origin)).toEqual(["fra-1", "fra-1", "fra-1"]);
    expect(back.map((r) => r.headers.get("x-edge-failover"))).toEqual([null, null, null]);
  });
});
