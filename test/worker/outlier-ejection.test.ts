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
import {
  type EjectionSettings,
  MAX_EJECT_MS,
  OutlierEjection,
} from "../../worker/outlier-ejection.js";
import { buildMap, type MapSpec } from "../cases/routing-cases.js";

describe("OutlierEjection (one isolate's memory, a fake clock)", () => {
  const s: EjectionSettings = { ejectAfter: 2, ejectMs: 10_000 };
  const clock = { t: 0 };
  const fresh = () => new OutlierEjection(() => clock.t);

  it("one origin fault makes it suspect: passed over while one probe runs; the probe's answer restores it", () => {
    const e = fresh();
    clock.t = 0;
    expect(e.admit("a", s)).toBe("use");
    e.record("a", true, s);
    expect(e.admit("a", s)).toBe("probe");
    // while the probe runs, everyone passes the origin over
    expect(e.admit("a", s)).toBe("skip");
    expect(e.admit("b", s)).toBe("use");
    e.record("a", false, s);
    expect(e.admit("a", s)).toBe("use");
  });

  it("ejects after ejectAfter faults in a row, a probe's included; a response in between resets the count", () => {
    const e = fresh();
    clock.t = 1000;
    e.record("a", true, s);
    e.record("a", false, s);
    e.record("a", true, s);
    expect(e.admit("a", s)).toBe("probe");
    e.record("a", true, s);
    clock.t = 10_999;
    expect(e.admit("a", s)).toBe("skip");
    clock.t = 11_000;
    expect(e.admit("a", s)).toBe("probe");
    expect(e.admit("a", s)).toBe("skip");
  });

  it("each ejection in a row lasts ejectMs longer, up to 300 s; any response forgets them", () => {
    const e = fresh();
    clock.t = 0;
    e.record("a", true, s);
    e.record("a", true, s);
    const periods: number[] = [];
    for (let i = 0; i < 32; i++) {
      const from = clock.t;
      while (e.admit("a", s) === "skip") clock.t += 1000;
      periods.push(clock.t - from);
      // the probe fails: ejected again
      e.record("a", true, s);
    }
    expect(periods.slice(0, 4)).toEqual([10_000, 20_000, 30_000, 40_000]);
    expect(Math.max(...periods)).toBe(MAX_EJECT_MS);
    expect(periods.at(-1)).toBe(MAX_EJECT_MS);
    e.record("a", false, s);
    e.record("a", true, s);
    expect(e.admit("a", s)).toBe("probe");
    e.record("a", true, s);
    const from = clock.t;
    while (e.admit("a", s) === "skip") clock.t += 1000;
    expect(clock.t - from).toBe(10_000);
  });

  it("the cap never shortens an EDGE_EJECT_SECONDS above it", () => {
    const long = { ejectAfter: 1, ejectMs: 600_000 };
    const e = fresh();
    clock.t = 0;
    e.record("a", true, long);
    clock.t = 599_999;
    expect(e.admit("a", long)).toBe("skip");
    clock.t = 600_000;
    expect(e.admit("a", long)).toBe("probe");
    e.record("a", true, long);
    clock.t = 1_199_999;
    expect(e.admit("a", long)).toBe("skip");
    clock.t = 1_200_000;
    expect(e.admit("a", long)).toBe("probe");
  });

  it("a probe that never reports back costs one more ejectMs, not the origin", () => {
    const e = fresh();
    clock.t = 0;
    e.record("a", true, s);
    expect(e.admit("a", s)).toBe("probe");
    clock.t = 9_999;
    expect(e.admit("a", s)).toBe("skip");
    clock.t = 10_000;
    expect(e.admit("a", s)).toBe("probe");
  });

  it("a probe that learned nothing (release) lets the next request send another", () => {
    const e = fresh();
    clock.t = 0;
    e.record("a", true, s);
    expect(e.admit("a", s)).toBe("probe");
    e.release("a");
    expect(e.admit("a", s)).toBe("probe");
  });

  it("EDGE_EJECT_AFTER=0 never passes an origin over", () => {
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

  /** Waits until `count()` reaches `want` (a probe runs after the viewer's answer), then a little longer. */
  async function eventually(count: () => number, want: number): Promise<number> {
    const deadline = Date.now() + 5_000;
    while (count() < want && Date.now() < deadline) await sleep(20);
    await sleep(TIMEOUT_MS + 100);
    return count();
  }

  it("a black-holed primary: one viewer pays the timeout; probes go out of band, each ejection in a row longer", async () => {
    const first = await sequential(8, "DE");
    for (const r of first) {
      expect(r.status).toBe(200);
      expect(r.json<ReceivedRequest>().origin).toBe("ams-1");
      expect(r.headers.get("x-edge-failover")).toBe("hole-1>ams-1");
      expect(r.headers.get("x-edge-degraded")).toBe("origin-failover");
    }
    expect(first.map(paidTimeout)).toEqual([true, false, false, false, false, false, false, false]);
    // the viewer's attempt, then one probe (which fails: ejected for one period)
    expect(await eventually(() => hole.accepted, 2)).toBe(2);

    await sleep(EJECT_SECONDS * 1000);
    const after = await sequential(4, "DE");
    // the period is over: the next request passes it over and probes it out of band
    expect(after.map(paidTimeout)).toEqual([false, false, false, false]);
    expect(after.every((r) => r.json<ReceivedRequest>().origin === "ams-1")).toBe(true);
    expect(await eventually(() => hole.accepted, 3)).toBe(3);

    // the probe failed again: this ejection lasts two periods
    await sleep(EJECT_SECONDS * 1000);
    await sequential(2, "DE");
    expect(hole.accepted).toBe(3);
    await sleep(EJECT_SECONDS * 1000);
    const third = await sequential(2, "DE");
    expect(third.map(paidTimeout)).toEqual([false, false]);
    expect(await eventually(() => hole.accepted, 4)).toBe(4);
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

  it("never leaves a route with nothing: when every pool is passed over, the first is tried anyway", async () => {
    // NL: hole-2, then hole-3; one request makes both suspect
    const r1 = await worker.dispatch("/x", { country: "NL" });
    expect(r1.status).toBe(504);
    expect(r1.headers.get("x-edge-failover")).toBe("hole-2>hole-3");
    const before = { h2: hole2.accepted, h3: hole3.accepted };
    const r2 = await worker.dispatch("/x", { country: "NL" });
    expect(r2.status).toBe(504);
    expect(r2.headers.get("x-edge-pool")).toBe("hole-2");
    expect(r2.headers.get("x-edge-failover")).toBeNull();
    expect(paidTimeout(r2)).toBe(true);
    // the viewer's attempt at hole-2, and a probe of each
    await eventually(() => hole3.accepted, before.h3 + 1);
    expect({ h2: hole2.accepted, h3: hole3.accepted }).toEqual({
      h2: before.h2 + 2,
      h3: before.h3 + 1,
    });
  });

  it("refusals count too, and an out-of-band probe that gets an answer brings the origin back", async () => {
    gate.disconnect();
    const refused = await sequential(4, "FR");
    expect(refused.every((r) => r.json<ReceivedRequest>().origin === "ams-1")).toBe(true);
    expect(origins.get("fra-1").hits).toBe(0);
    // the viewer's refusal and the probe's: ejected for a period
    await sleep(200);
    gate.accept();
    const still = await worker.dispatch("/x", { country: "FR" });
    expect(still.json<ReceivedRequest>().origin).toBe("ams-1");
    expect(origins.get("fra-1").hits).toBe(0);
    await sleep(EJECT_SECONDS * 1000 + 100);
    // the request that finds the period over is passed over while its probe runs
    const probing = await worker.dispatch("/seg-9.ts?q=1", { country: "FR" });
    expect(probing.json<ReceivedRequest>().origin).toBe("ams-1");
    expect(probing.headers.get("x-edge-failover")).toBe("fra-1>ams-1");
    const fra = origins.get("fra-1");
    const deadline = Date.now() + 5_000;
    while (fra.hits === 0 && Date.now() < deadline) await sleep(10);
    expect(fra.requests[0]).toMatchObject({ method: "HEAD", url: "/seg-9.ts?q=1" });
    expect(fra.requests[0]?.headers["x-edge-pool"]).toBe("fra-1");
    let back: EdgeResponse | undefined;
    for (let i = 0; i < 50; i++) {
      back = await worker.dispatch("/x", { country: "FR" });
      if (back.json<ReceivedRequest>().origin === "fra-1") break;
      await sleep(20);
    }
    expect(back?.json<ReceivedRequest>().origin).toBe("fra-1");
    expect(back?.headers.get("x-edge-failover")).toBeNull();
    expect(fra.requests.filter((r) => r.method === "HEAD")).toHaveLength(1);
  });
});
