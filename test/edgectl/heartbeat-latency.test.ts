import { Etcd3 } from "etcd3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { LatencyWindow } from "../../heartbeat/latency-window.js";
import { healthValue, needsRewrite } from "../../heartbeat/published-health.js";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { type OriginServer, type Origins, startOrigins } from "../../testkit/origins.js";
import { freePort } from "../../testkit/ports.js";
import { parsePromText, sampleValue } from "../../testkit/prom-text.js";
import { type CliResult, runCli, uniquePrefix, waitFor } from "./cli-harness.js";

describe("LatencyWindow", () => {
  it("keeps the last 20 samples and gives their p90 (nearest rank, whole ms)", () => {
    const w = new LatencyWindow();
    expect(w.p90()).toBeNull();
    for (let i = 1; i <= 10; i++) w.add(i * 10.4);
    // rank ceil(0.9 * 10) = 9: 93.6
    expect(w.p90()).toBe(94);
    for (let i = 0; i < 20; i++) w.add(500);
    expect(w.count).toBe(20);
    expect(w.p90()).toBe(500);
    w.add(100);
    w.add(100);
    // 18 × 500 and 2 × 100: rank 18 is still 500; a third fast sample brings it down
    expect(w.p90()).toBe(500);
    w.add(100);
    expect(w.p90()).toBe(500);
    for (let i = 0; i < 16; i++) w.add(100);
    expect(w.p90()).toBe(100);
  });

  it("publishes the p90, or the lower of the last two probes when both are above it", () => {
    const w = new LatencyWindow();
    expect(w.published()).toBeNull();
    w.add(900);
    // one sample: nothing to compare it with
    expect(w.published()).toBe(900);
    for (let i = 0; i < 20; i++) w.add(300);
    expect(w.published()).toBe(300);
    // one outlier changes nothing, then or after
    w.add(1400);
    expect(w.p90()).toBe(300);
    expect(w.published()).toBe(300);
    w.add(300);
    expect(w.published()).toBe(300);
    for (let i = 0; i < 20; i++) w.add(300);
    // two slow in a row: the lower of them, two probes before the p90 itself would turn
    w.add(1450);
    w.add(1380);
    expect(w.p90()).toBe(300);
    expect(w.published()).toBe(1380);
    w.add(1420);
    // three slow: the p90 itself has turned
    expect(w.p90()).toBe(1380);
    expect(w.published()).toBe(1380);
    // fast again: the window's p90, which keeps the slow probes until they age out
    w.add(300);
    expect(w.published()).toBe(1380);
  });
});

describe("needsRewrite", () => {
  const h = (p90Ms?: number, status: "healthy" | "unhealthy" = "healthy") => ({
    status,
    ...(p90Ms !== undefined ? { p90Ms } : {}),
  });
  it("rewrites on a status change, a p90 that appears, or a move of more than 10 % and 50 ms", () => {
    expect(needsRewrite(null, h())).toBe(true);
    expect(needsRewrite(h(200), h(200, "unhealthy"))).toBe(true);
    expect(needsRewrite(h(), h(200))).toBe(true);
    expect(needsRewrite(h(200), h())).toBe(true);
    expect(needsRewrite(h(1000), h(1100))).toBe(false);
    expect(needsRewrite(h(1000), h(900))).toBe(false);
    expect(needsRewrite(h(1000), h(1101))).toBe(true);
    expect(needsRewrite(h(1000), h(899))).toBe(true);
    expect(needsRewrite(h(1000), { ...h(1050), samples: 7 })).toBe(false);
  });

  it("does not rewrite a fast pool's p90 for a move of 50 ms or less, however many percent", () => {
    // 300 → 350 is 17 %: scheduling jitter on a loaded checker host, not news
    expect(needsRewrite(h(300), h(350))).toBe(false);
    expect(needsRewrite(h(300), h(250))).toBe(false);
    expect(needsRewrite(h(300), h(351))).toBe(true);
    expect(needsRewrite(h(20), h(70))).toBe(false);
    expect(needsRewrite(h(0), h(51))).toBe(true);
  });
  it("puts samples only on a checker's own key", () => {
    const v = { status: "healthy" as const, p90Ms: 180, samples: 20 };
    expect(JSON.parse(healthValue(v, true))).toEqual({
      status: "healthy",
      p90_ms: 180,
      samples: 20,
    });
    expect(JSON.parse(healthValue(v, false))).toEqual({ status: "healthy", p90_ms: 180 });
  });
});

let etcd: EtcdServer;
let client: Etcd3;
let origins: Origins;
let stops: AbortController[] = [];

beforeAll(async () => {
  [etcd, origins] = await Promise.all([startEtcd(), startOrigins(["fra-1", "ams-1"])]);
  client = new Etcd3({ hosts: etcd.endpoint });
});
afterEach(() => {
  for (const s of stops) s.abort();
  stops = [];
  for (const o of origins.all) o.reset();
});
afterAll(async () => {
  client?.close();
  await Promise.all([etcd?.stop(), origins?.close()]);
});

/** The origin answers its check after `delayMs` (time to first byte), with `body` if given. */
function dial(origin: OriginServer, delayMs: number, body?: unknown, status = 200): void {
  origin.respond(() => ({
    status,
    delayMs,
    ...(body !== undefined
      ? { headers: { "content-type": "application/json" }, body: JSON.stringify(body) }
      : {}),
  }));
}

interface Running {
  readonly key: string;
  readonly done: Promise<CliResult>;
  readonly stop: AbortController;
  read(): Promise<{ value: Record<string, unknown>; version: number; lease: string } | null>;
}

function heartbeat(
  tag: string,
  pool: string,
  origin: OriginServer,
  extra: readonly string[] = [],
): Running {
  const prefix = uniquePrefix(tag);
  const checker = extra.includes("--checker") ? extra[extra.indexOf("--checker") + 1] : undefined;
  const key = `${prefix}health/${pool}${checker ? `/${checker}` : ""}`;
  const stop = new AbortController();
  stops.push(stop);
  const argv = ["heartbeat", pool, "--ttl", "5", "--interval", "0.1", "--check-timeout", "3"];
  const done = runCli([...argv, "--check-url", `${origin.url}/healthz`, ...extra], {
    env: { ETCD_ENDPOINTS: etcd.endpoint, ROUTING_PREFIX: prefix },
    signal: stop.signal,
  });
  return {
    key,
    done,
    stop,
    async read() {
      const kv = (await client.get(key).exec()).kvs[0];
      if (!kv) return null;
      return {
        value: JSON.parse(kv.value.toString()) as Record<string, unknown>,
        version: Number(kv.version),
        lease: kv.lease,
      };
    },
  };
}

async function until<T>(
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  let last = await read();
  await waitFor(async () => {
    last = await read();
    return ok(last);
  }, timeoutMs);
  return last;
}

describe("edgectl heartbeat: latency (a real loopback origin whose delay is dialled, real etcd)", () => {
  it("--checker writes health/POOL/CHECKER on its own lease, with p90_ms ≈ the origin's delay", async () => {
    const fra = origins.get("fra-1");
    dial(fra, 150);
    const a = heartbeat("hb-chk", "fra-1", fra, ["--checker", "probe-a"]);
    const b = heartbeat("hb-chk", "fra-1", fra, ["--checker", "probe-b"]);
    const ka = await until(a.read, (v) => v !== null);
    const kb = await until(b.read, (v) => v !== null);
    expect(a.key.endsWith("health/fra-1/probe-a")).toBe(true);
    expect(ka?.value).toMatchObject({ status: "healthy", samples: 1 });
    expect(ka?.value.p90_ms).toBeGreaterThanOrEqual(150);
    expect(ka?.value.p90_ms).toBeLessThan(400);
    expect(kb?.value.status).toBe("healthy");
    expect(ka?.lease).not.toBe("0");
    expect(ka?.lease).not.toBe(kb?.lease);
    // the plain key is left alone
    expect(await client.get(a.key.replace(/\/probe-a$/, "")).string()).toBeNull();

    // the origin slows down to 600 ms: the p90 moves by far more than 10 %, and is rewritten
    dial(fra, 600);
    const slow = await until(a.read, (v) => Number(v?.value.p90_ms) >= 600);
    expect(slow?.value.p90_ms).toBeLessThan(900);
    expect(slow?.value.samples).toBeGreaterThan(1);
    expect(slow?.version).toBeGreaterThan(1);
    a.stop.abort();
    b.stop.abort();
    const r = await a.done;
    expect(r.code, r.stderr).toBe(0);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; checker?: string; p90_ms?: number });
    expect(events.every((e) => e.checker === "probe-a")).toBe(true);
    expect(events.some((e) => e.event === "p90-changed" && Number(e.p90_ms) >= 600)).toBe(true);
    // SIGTERM revoked the checker's own lease
    expect(await a.read()).toBeNull();
  });

  it("a steady p90 over 20 probes writes once; a status change writes (metrics count both)", async () => {
    const ams = origins.get("ams-1");
    // The check URL's own figure: steady to the millisecond, whatever the test host's load does
    // to loopback times (a steady measured TTFB is the bench's health.etcd_writes_per_checker_hour).
    dial(ams, 20, { p90_ms: 640 });
    const port = await freePort();
    const hb = heartbeat("hb-steady", "ams-1", ams, ["--listen", `127.0.0.1:${port}`]);
    const metric = async (name: string) =>
      sampleValue(
        parsePromText(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()),
        name,
        { pool: "ams-1" },
      );
    await until(hb.read, (v) => v !== null);
    // the plain key: status and p90_ms, no samples
    const first = await hb.read();
    expect(first?.value).toEqual({ status: "healthy", p90_ms: 640 });
    const from = ams.hits;
    expect(await waitFor(async () => ams.hits - from >= 20, 30_000)).toBe(true);
    expect((await hb.read())?.version).toBe(1);
    expect(await metric("edge_heartbeat_etcd_writes_total")).toBe(1);
    expect(await metric("edge_heartbeat_p90_ms")).toBe(640);
    expect(await metric("edge_heartbeat_p90_samples")).toBe(0);

    // the check fails (503, same figure): after 3 failures the status is rewritten, once
    dial(ams, 20, undefined, 503);
    const down = await until(hb.read, (v) => v?.value.status === "unhealthy");
    expect(down?.version).toBe(2);
    expect(await metric("edge_heartbeat_etcd_writes_total")).toBe(2);
    hb.stop.abort();
    expect((await hb.done).code).toBe(0);
  });

  it("one slow probe changes nothing; two in a row publish the slow figure before the window's p90 turns", async () => {
    const fra = origins.get("fra-1");
    dial(fra, 100);
    const hb = heartbeat("hb-attack", "fra-1", fra, ["--checker", "probe-attack"]);
    await until(hb.read, (v) => v !== null);
    // a full window of fast probes (the warm-up probe and 20 samples, and some margin)
    const filled = fra.hits;
    expect(await waitFor(async () => fra.hits - filled >= 24, 30_000)).toBe(true);
    const fast = await hb.read();
    expect(Number(fast?.value.p90_ms)).toBeLessThan(400);
    /** The next `n` probes answer after 800 ms, every later one after 100 ms. */
    const slowFor = (n: number) => {
      let left = n;
      fra.respond(() => ({ status: 200, delayMs: left-- > 0 ? 800 : 100 }));
    };
    slowFor(1);
    const one = fra.hits;
    expect(await waitFor(async () => fra.hits - one >= 5, 30_000)).toBe(true);
    expect(Number((await hb.read())?.value.p90_ms)).toBeLessThan(400);
    slowFor(2);
    // two slow probes of 20: the nearest-rank p90 alone would never turn
    const two = await until(hb.read, (v) => Number(v?.value.p90_ms) >= 800);
    expect(two?.value.p90_ms).toBeLessThan(1200);
    expect(two?.value.samples).toBe(20);
  });

  it("counts a timed-out probe as at least its timeout: a pool slower than its checks reads as slow, not only failing", async () => {
    const fra = origins.get("fra-1");
    dial(fra, 50);
    const hb = heartbeat("hb-timeout", "fra-1", fra, [
      "--checker",
      "probe-timeout",
      "--check-timeout",
      "0.5",
    ]);
    const fast = await until(hb.read, (v) => v !== null);
    expect(Number(fast?.value.p90_ms)).toBeLessThan(500);
    // Every probe now times out (the origin answers in 1.5 s, the check waits 0.5 s).
    dial(fra, 1_500);
    const down = await until(hb.read, (v) => v?.value.status === "unhealthy");
    // Two timeouts in a row publish at least the timeout (the fast attack), before and with the
    // status change: the key says slow as well as failing.
    expect(Number(down?.value.p90_ms)).toBeGreaterThanOrEqual(500);
    expect(down?.value.p90_ms).toBeLessThan(1_500);
    // The JSON figure of a URL that used to answer no longer speaks for it either.
    dial(fra, 0, { p90_ms: 9 });
    await until(hb.read, (v) => v?.value.status === "healthy");
    dial(fra, 1_500, { p90_ms: 9 });
    const slow = await until(hb.read, (v) => v?.value.status === "unhealthy");
    expect(Number(slow?.value.p90_ms)).toBeGreaterThanOrEqual(500);
  });

  it("registers by the check after the warm-up, even when the warm-up itself times out", async () => {
    const fra = origins.get("fra-1");
    let calls = 0;
    fra.respond(() => ({ status: 200, delayMs: calls++ === 0 ? 2_000 : 50 }));
    const hb = heartbeat("hb-warm", "fra-1", fra, [
      "--checker",
      "probe-warm",
      "--check-timeout",
      "0.5",
    ]);
    const first = await until(hb.read, (v) => v !== null);
    expect(first?.value.status).toBe("healthy");
    expect(first?.version).toBe(1);
    expect(Number(first?.value.p90_ms)).toBeLessThan(500);
  });

  it("writes a check's outcome when the check ends, not a check interval later", async () => {
    const fra = origins.get("fra-1");
    let figure = 1000;
    let movedAt = 0;
    fra.respond(() => {
      if (figure === 3000 && movedAt === 0) movedAt = Date.now();
      return {
        status: 200,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ p90_ms: figure }),
      };
    });
    // the last --interval and --ttl win: one check and one renewal every 5 s
    const hb = heartbeat("hb-prompt", "fra-1", fra, [
      "--checker",
      "probe-prompt",
      "--interval",
      "5",
      "--ttl",
      "15",
    ]);
    await until(hb.read, (v) => v?.value.p90_ms === 1000);
    figure = 3000;
    const moved = await until(hb.read, (v) => v?.value.p90_ms === 3000, 20_000);
    const seenAt = Date.now();
    expect(moved?.value.p90_ms).toBe(3000);
    // a tick later would be 5 s after the answer
    expect(seenAt - movedAt).toBeLessThan(2_500);
  });

  it("publishes the check URL's own JSON p90_ms instead, and rewrites it only past 10 %", async () => {
    const fra = origins.get("fra-1");
    dial(fra, 0, { p90_ms: 1234, status: "ok" });
    const hb = heartbeat("hb-json", "fra-1", fra, ["--checker", "probe-json"]);
    const first = await until(hb.read, (v) => v !== null);
    expect(first?.value).toEqual({ status: "healthy", p90_ms: 1234 });
    // within 10 %: nothing written over 10 more probes
    dial(fra, 0, { p90_ms: 1300 });
    const from = fra.hits;
    expect(await waitFor(async () => fra.hits - from >= 10, 10_000)).toBe(true);
    expect((await hb.read())?.version).toBe(1);
    // past 10 %: rewritten with the URL's figure
    dial(fra, 0, { p90_ms: 2000 });
    const moved = await until(hb.read, (v) => v?.value.p90_ms === 2000);
    expect(moved?.value).toEqual({ status: "healthy", p90_ms: 2000 });
    expect(moved?.version).toBe(2);
    // a JSON answer without a usable figure: back to the measured TTFB
    dial(fra, 0, { p90_ms: "fast" });
    const measured = await until(hb.read, (v) => Number(v?.value.p90_ms) < 1000);
    expect(measured?.value.samples).toBeGreaterThan(0);
  });

  it.each(["Probe_A", "-probe", "a".repeat(64), "probe a", "x/y"])(
    "refuses --checker %j with an error naming it (exit 1, nothing written)",
    async (name) => {
      const prefix = uniquePrefix("hb-bad");
      const r = await runCli(["heartbeat", "fra-1", "--checker", name], {
        env: { ETCD_ENDPOINTS: etcd.endpoint, ROUTING_PREFIX: prefix },
      });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain("--checker");
      expect(r.stderr).toContain(JSON.stringify(name));
      expect((await client.getAll().prefix(prefix).keys()).length).toBe(0);
    },
  );
});
