import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serializeMap } from "../../../core/index.js";
import {
  type Blackhole,
  type Origins,
  startBlackhole,
  startOrigins,
} from "../../../testkit/origins.js";
import { startWorker, type TestWorker } from "../../../testkit/worker.js";
import { buildMap, type MapSpec } from "../../cases/routing-cases.js";
import { observationsWhen, rowOf } from "../../helpers/observations.js";

const TOKEN = "observe-token-for-tests";
const SLOW_MS = 250;

describe("the edge records what every viewer request got (docs/reference.md §12)", () => {
  let origins: Origins;
  let hole: Blackhole;
  let worker: TestWorker;

  beforeAll(async () => {
    origins = await startOrigins(["fra-1", "ams-1", "slow-1", "dead-1", "dead-2"]);
    await origins.get("dead-1").kill();
    await origins.get("dead-2").kill();
    hole = await startBlackhole();
    origins.get("slow-1").respond(() => ({ status: 200, body: "slow", delayMs: SLOW_MS }));
    origins.get("fra-1").respond((req) => {
      const m = /^\/status\/(\d{3})/.exec(req.url);
      return m ? { status: Number(m[1]), body: "canned" } : undefined;
    });
    const spec: MapSpec = {
      default: { chain: ["fra-1", "ams-1"], source: "country/_default" },
      countries: {
        BR: { chain: ["slow-1"], source: "country/BR" },
        NL: { chain: ["dead-1", "ams-1"], source: "country/NL" },
        PL: { chain: ["dead-1", "dead-2"], source: "country/PL" },
        CZ: { chain: ["hole-1"], source: "country/CZ" },
      },
    };
    const originOf = (p: string) => (p === "hole-1" ? hole.url : origins.get(p).url);
    worker = await startWorker({
      OBSERVE_TOKEN: TOKEN,
      OBSERVE_FLUSH_SECONDS: "0",
      MAX_ATTEMPTS: "2",
      ORIGIN_TIMEOUT_MS: "600",
      EDGE_EJECT_AFTER: "0",
    });
    await worker.putMap(serializeMap(buildMap(spec, { rev: 2, originOf })));
  });
  afterAll(async () => {
    await worker?.dispose();
    await hole?.close();
    await origins?.close();
  });

  it("counts each request once per (country, pool, outcome), with failover and TTFB", async () => {
    for (let i = 0; i < 5; i++)
      expect((await worker.dispatch(`/a${i}`, { country: "DE" })).status).toBe(200);
    for (let i = 0; i < 3; i++)
      expect((await worker.dispatch("/seg", { country: "BR" })).status).toBe(200);
    for (let i = 0; i < 2; i++) {
      const res = await worker.dispatch("/seg", { country: "NL" });
      expect(res.headers.get("x-edge-failover")).toBe("dead-1>ams-1");
    }
    expect((await worker.dispatch("/seg", { country: "PL" })).status).toBe(502);
    expect((await worker.dispatch("/seg", { country: "CZ" })).status).toBe(504);
    expect((await worker.dispatch("/status/503", { country: "FR" })).status).toBe(200);
    expect((await worker.dispatch("/status/500", { country: "FR" })).status).toBe(500);
    expect((await worker.dispatch("/status/404", { country: "FR" })).status).toBe(404);
    expect(
      (await worker.dispatch("/seg", { country: "FR", headers: { "X-Edge-Hop": "1" } })).status,
    ).toBe(508);

    const body = await observationsWhen(
      worker,
      TOKEN,
      (b) => b.rows.reduce((n, r) => n + r.requests, 0) >= 16,
    );
    expect(body.window_s).toBe(60);
    expect(body.rows.reduce((n, r) => n + r.requests, 0)).toBe(16);

    const de = rowOf(body, "DE", "fra-1");
    expect(de?.requests).toBe(5);
    expect(de?.outcomes).toEqual({
      ok: 5,
      client_error: 0,
      origin_error: 0,
      timeout: 0,
      unreachable: 0,
      edge_error: 0,
    });
    expect(de?.failovers).toBe(0);
    expect(de?.ttfb_ms.p50).not.toBeNull();

    const br = rowOf(body, "BR", "slow-1");
    expect(br?.requests).toBe(3);
    // The origin waits SLOW_MS before its headers: every sample lands at or above that bucket.
    expect(br?.ttfb_ms.p50).toBeGreaterThanOrEqual(SLOW_MS);
    expect(br?.ttfb_counts.reduce((a, b) => a + b, 0)).toBe(3);
    // The histogram's _sum: every millisecond counted, each sample at least SLOW_MS.
    expect(br?.ttfb_sum_ms).toBeGreaterThanOrEqual(3 * SLOW_MS);
    expect(br?.ttfb_sum_ms).toBeLessThan(3 * 5000);

    const nl = rowOf(body, "NL", "ams-1");
    expect(nl?.requests).toBe(2);
    expect(nl?.failovers).toBe(2);
    expect(nl?.outcomes.ok).toBe(2);

    const pl = rowOf(body, "PL", "dead-2");
    expect(pl?.outcomes.unreachable).toBe(1);
    expect(pl?.ttfb_ms.p50).toBeNull();
    expect(pl?.ttfb_sum_ms).toBe(0);

    const cz = rowOf(body, "CZ", "hole-1");
    expect(cz?.outcomes.timeout).toBe(1);
    // A timeout's wait is a TTFB sample of at least the origin timeout (600 ms here): a pool
    // slower than the edge allows reads as slow, not only as failing.
    expect(cz?.ttfb_ms.p50).toBeGreaterThanOrEqual(600);
    expect(cz?.ttfb_sum_ms).toBeGreaterThanOrEqual(600);

    // A 503 moves on to ams-1 (ok there); a 500 and a 404 are the origin's answers.
    expect(rowOf(body, "FR", "ams-1")?.outcomes.ok).toBe(1);
    expect(rowOf(body, "FR", "ams-1")?.failovers).toBe(1);
    expect(rowOf(body, "FR", "fra-1")?.outcomes.origin_error).toBe(1);
    expect(rowOf(body, "FR", "fra-1")?.outcomes.client_error).toBe(1);
    // The edge's own 508 (a loop) is an edge error of no pool.
    expect(rowOf(body, "FR", "-")?.outcomes.edge_error).toBe(1);
  });

  it("keeps the player's CMCD buffer starvation and throughput, from headers or the query", async () => {
    await worker.dispatch("/v.m4s", {
      country: "SE",
      headers: { "CMCD-Status": "bs", "CMCD-Request": "mtp=5000" },
    });
    await worker.dispatch(`/v.m4s?CMCD=${encodeURIComponent('bs,mtp=4800,sid="s1"')}`, {
      country: "SE",
    });
    await worker.dispatch("/v.m4s", { country: "SE", headers: { "CMCD-Request": "mtp=5100" } });
    await worker.dispatch("/v.m4s", { country: "SE", headers: { "CMCD-Status": "bs=?0" } });
    await worker.dispatch("/steer.json?_HLS_throughput=4900000", { country: "SE" });
    await worker.dispatch("/v.m4s", { country: "SE", headers: { "CMCD-Status": 'bs,"unclosed' } });
    const body = await observationsWhen(
      worker,
      TOKEN,
      (b) => (rowOf(b, "SE", "fra-1")?.requests ?? 0) >= 6,
    );
    const se = rowOf(body, "SE", "fra-1");
    expect(se?.requests).toBe(6);
    expect(se?.outcomes.ok).toBe(6);
    expect(se?.starved).toBe(2);
    expect(se?.cmcd_requests).toBe(3);
    // 4800, 4900, 5000 and 5100 kbit/s all fall in the (3000, 5000] or (5000, 7500] buckets.
    expect(se?.throughput_kbps_p50).toBe(5000);
  });

  it("answers only the bearer of OBSERVE_TOKEN, and never names an origin", async () => {
    const none = await worker.dispatch("/__edge/observations");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toMatch(/^Bearer/);
    const wrong = await worker.dispatch("/__edge/observations", {
      headers: { Authorization: `Bearer ${TOKEN}x` },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body).not.toContain("fra-1");
    const debugHeader = await worker.dispatch("/__edge/observations", {
      headers: { "X-Edge-Debug-Token": TOKEN },
    });
    expect(debugHeader.status).toBe(401);
    const ok = await worker.dispatch("/__edge/observations", {
      headers: { authorization: `bearer ${TOKEN}` },
    });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("cache-control")).toBe("no-store");
    for (const o of [...origins.all.map((x) => String(x.port)), String(hole.port), "127.0.0.1"]) {
      expect(ok.body).not.toContain(o);
    }
  });

  it("takes a window of 1-900 seconds, and by=minute splits rows per minute", async () => {
    for (const bad of ["0", "901", "abc", "60.5", "-1"]) {
      const res = await worker.dispatch(`/__edge/observations?window=${bad}`, {
        headers: { Authorization: `Bearer ${TOKEN}` },
      });
      expect(res.status, bad).toBe(400);
      expect(res.json<{ error: string }>().error).toBe("bad-window");
    }
    const grouping = await worker.dispatch("/__edge/observations?by=hour", {
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(grouping.json<{ error: string }>().error).toBe("bad-grouping");
    const wide = await observationsWhen(worker, TOKEN, () => true, "?window=900");
    expect(wide.window_s).toBe(900);
    expect(Date.parse(wide.until) - Date.parse(wide.since)).toBeGreaterThanOrEqual(900_000);
    const byMinute = await observationsWhen(worker, TOKEN, () => true, "?window=900&by=minute");
    const de = byMinute.rows.filter((r) => r.country === "DE" && r.pool === "fra-1");
    expect(de.length).toBeGreaterThanOrEqual(1);
    expect(de.every((r) => typeof r.minute === "string" && r.minute.endsWith(":00.000Z"))).toBe(
      true,
    );
    expect(de.reduce((n, r) => n + r.requests, 0)).toBe(5);
  });
});

describe("recording settings", () => {
  let origins: Origins;
  beforeAll(async () => {
    origins = await startOrigins(["fra-1"]);
  });
  afterAll(async () => {
    await origins?.close();
  });
  const map = () =>
    serializeMap(
      buildMap(
        { default: { chain: ["fra-1"], source: "country/_default" }, countries: {} },
        {
          rev: 2,
          originOf: (p) => origins.get(p).url,
        },
      ),
    );

  it("without OBSERVE_TOKEN, /__edge/observations is a 404 like any unknown edge path", async () => {
    const worker = await startWorker({});
    try {
      const res = await worker.dispatch("/__edge/observations", {
        headers: { Authorization: "Bearer anything" },
      });
      expect(res.status).toBe(404);
      expect(res.body).toBe("Not Found\n");
    } finally {
      await worker.dispose();
    }
  });

  it('OBSERVE="off" records nothing', async () => {
    const worker = await startWorker({
      OBSERVE: "off",
      OBSERVE_TOKEN: TOKEN,
      OBSERVE_FLUSH_SECONDS: "0",
    });
    try {
      await worker.putMap(map());
      for (let i = 0; i < 3; i++)
        expect((await worker.dispatch("/x", { country: "DE" })).status).toBe(200);
      const body = await observationsWhen(worker, TOKEN, () => true);
      expect(body.rows).toEqual([]);
    } finally {
      await worker.dispose();
    }
  });

  it("holds sums in the isolate until OBSERVE_FLUSH_SECONDS have passed", async () => {
    const worker = await startWorker({ OBSERVE_TOKEN: TOKEN, OBSERVE_FLUSH_SECONDS: "1" });
    try {
      await worker.putMap(map());
      expect((await worker.dispatch("/x", { country: "DE" })).status).toBe(200);
      expect((await worker.dispatch("/x", { country: "DE" })).status).toBe(200);
      const before = await observationsWhen(worker, TOKEN, () => true);
      expect(rowOf(before, "DE", "fra-1")).toBeUndefined();
      await new Promise((r) => setTimeout(r, 1100));
      expect((await worker.dispatch("/x", { country: "DE" })).status).toBe(200);
      const after = await observationsWhen(
        worker,
        TOKEN,
        (b) => rowOf(b, "DE", "fra-1") !== undefined,
      );
      expect(rowOf(after, "DE", "fra-1")?.requests).toBe(3);
    } finally {
      await worker.dispose();
    }
  });
});
