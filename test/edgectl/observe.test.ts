import type { ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ObserveEventShape } from "../../edgectl/output/shapes/observe-shape.js";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { freePort } from "../../testkit/ports.js";
import { type PromSample, parsePromText, sampleValue } from "../../testkit/prom-text.js";
import { parseLogLines } from "../helpers/log-schema.js";
import { ObservationsEdge } from "../helpers/observations-edge.js";
import { runCli, spawnBin, uniquePrefix, waitFor } from "./cli-harness.js";

const TOKEN = "observe-token-5f1c9a";
let etcd: EtcdServer;
let client: Etcd3;
let edge: ObservationsEdge;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  etcd = await startEtcd();
  client = new Etcd3({ hosts: etcd.endpoint });
  edge = await new ObservationsEdge(TOKEN).start();
  dir = mkdtempSync(join(tmpdir(), "observe-test-"));
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await edge?.stop();
  client?.close();
  await etcd?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** One running `edgectl observe` (the real bin) and its /metrics and /status. */
async function startObserver(prefix: string, state: string) {
  const port = await freePort();
  const child = spawnBin(
    [
      "observe",
      "--edge",
      edge.url,
      "--interval",
      "0.2",
      "--min-samples",
      "50",
      "--ttl",
      "5",
      "--state",
      state,
      "--listen",
      `127.0.0.1:${port}`,
    ],
    { ETCD_ENDPOINTS: etcd.endpoint, ROUTING_PREFIX: prefix, OBSERVE_TOKEN: TOKEN },
  );
  children.push(child);
  let stdout = "";
  child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (stdout += d.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  const base = `http://127.0.0.1:${port}`;
  const scrape = async (): Promise<PromSample[]> =>
    parsePromText(await (await fetch(`${base}/metrics`)).text());
  const status = async () =>
    (await (await fetch(`${base}/status`)).json()) as Record<string, unknown>;
  const up = await waitFor(async () => (await status().catch(() => null))?.status === "ok", 30_000);
  expect(up, stdout).toBe(true);
  return {
    scrape,
    status,
    stdout: () => stdout,
    stop: async () => {
      child.kill("SIGTERM");
      return exited;
    },
  };
}

const requests = (s: PromSample[], country: string, pool: string, outcome: string) =>
  sampleValue(s, "edge_viewer_requests_total", { country, pool, outcome }) ?? 0;

describe("edgectl observe", () => {
  it("counts every request once, writes observed/ for pairs with enough samples only when they move, and goes on across restarts of the edge and of itself", async () => {
    const prefix = uniquePrefix("observe");
    const state = join(dir, "state.json");
    const brKey = `${prefix}observed/BR/us-east`;
    const obs = await startObserver(prefix, state);
    edge.setTtfb("BR", "us-east", { p50: 3000, p90: 4000, p99: 4500 });
    edge.setTtfb("US", "us-east", { p50: 60, p90: 120, p99: 300 });

    // requests arrive in several flushes (isolates) between polls
    edge.record("BR", "us-east", { outcomes: { ok: 25 } });
    edge.record("BR", "us-east", { outcomes: { ok: 15, origin_error: 2 }, starved: 3 });
    edge.record("US", "us-east", { outcomes: { ok: 10 }, failovers: 1 });
    const counted = (br: number, brErr: number, us: number) =>
      waitFor(async () => {
        const s = await obs.scrape();
        return (
          requests(s, "BR", "us-east", "ok") === br &&
          requests(s, "BR", "us-east", "origin_error") === brErr &&
          requests(s, "US", "us-east", "ok") === us
        );
      }, 10_000);
    expect(await counted(40, 2, 10)).toBe(true);
    let s = await obs.scrape();
    expect(sampleValue(s, "edge_viewer_starved_total", { country: "BR", pool: "us-east" })).toBe(3);
    expect(sampleValue(s, "edge_viewer_failovers_total", { country: "US", pool: "us-east" })).toBe(
      1,
    );
    // 42 requests: below --min-samples, nothing written
    expect(await client.get(brKey).string()).toBeNull();

    edge.record("BR", "us-east", { outcomes: { ok: 20 } });
    expect(await waitFor(async () => (await client.get(brKey).string()) !== null, 10_000)).toBe(
      true,
    );
    expect(JSON.parse((await client.get(brKey).string()) ?? "")).toEqual({
      p90_ms: 4000,
      samples: 62,
      error_ratio: 0.0323,
    });
    const written = (await client.get(brKey).exec()).kvs[0];
    expect(written?.lease).not.toBe("0");
    expect(await client.get(`${prefix}observed/US/us-east`).string()).toBeNull();

    // the TTFB histogram: every request with a TTFB, its p90 in the bucket of 4 s
    s = await obs.scrape();
    const labels = { country: "BR", pool: "us-east" };
    expect(sampleValue(s, "edge_viewer_ttfb_seconds_count", labels)).toBe(62);
    const buckets = s.filter(
      (x) => x.name === "edge_viewer_ttfb_seconds_bucket" && x.labels.country === "BR",
    );
    const p90le = buckets.find((b) => b.value >= 0.9 * 62)?.labels.le;
    expect(p90le).toBe("4");

    // more of the same: no rewrite (a steady edge costs etcd nothing)
    edge.record("BR", "us-east", { outcomes: { ok: 30 } });
    expect(await counted(90, 2, 10)).toBe(true);
    await sleep(600);
    expect((await client.get(brKey).exec()).kvs[0]?.mod_revision).toBe(written?.mod_revision);
    s = await obs.scrape();
    expect(sampleValue(s, "edge_observer_etcd_writes_total", { op: "put" })).toBe(1);

    // the p90 moves by more than 10 % and 50 ms: rewritten
    edge.setTtfb("BR", "us-east", { p50: 200, p90: 200, p99: 200 });
    edge.record("BR", "us-east", { outcomes: { ok: 2000 } });
    expect(
      await waitFor(
        async () => JSON.parse((await client.get(brKey).string()) ?? "{}").p90_ms === 200,
        10_000,
      ),
    ).toBe(true);

    // the edge's aggregator restarts: the counters keep growing by what it records now
    edge.restartAggregator();
    edge.record("BR", "us-east", { outcomes: { ok: 5 } });
    expect(await counted(2095, 2, 10)).toBe(true);
    // 5 requests in the window now: the key goes
    expect(await waitFor(async () => (await client.get(brKey).string()) === null, 10_000)).toBe(
      true,
    );

    // the observer stops: its lease is revoked; requests go on while it is down
    edge.record("BR", "us-east", { outcomes: { ok: 60 } });
    await sleep(600);
    expect(await obs.stop()).toBe(0);
    expect(await client.get(brKey).string()).toBeNull();
    const lines = parseLogLines(obs.stdout());
    expect(lines.every((l) => l.service === "edge-observer")).toBe(true);
    expect(lines.map((l) => l.event).at(-1)).toBe("stopped");
    expect(obs.stdout()).not.toContain(TOKEN);
    edge.record("BR", "us-east", { outcomes: { ok: 7 } });

    // started again on its state file: the counters go on from 2155, and the 7 are counted once
    const again = await startObserver(prefix, state);
    expect(
      await waitFor(
        async () => requests(await again.scrape(), "BR", "us-east", "ok") === 2162,
        10_000,
      ),
    ).toBe(true);
    await sleep(600);
    s = await again.scrape();
    expect(requests(s, "BR", "us-east", "ok")).toBe(2162);
    expect(requests(s, "US", "us-east", "ok")).toBe(10);
    expect(sampleValue(s, "edge_viewer_starved_total", labels)).toBe(3);
    expect(await again.stop()).toBe(0);
  });

  it.each([
    ["wrong-token", "unauthorized"],
    ["junk-json", "junk-response"],
    ["junk-shape", "junk-response"],
    ["error-500", "edge-status"],
    ["down", "edge-unreachable"],
  ] as const)(
    "%s: /status says %s, /metrics counts it, and nothing is written to etcd",
    async (mode, reason) => {
      const prefix = uniquePrefix("observe-fail");
      edge.setTtfb("DE", "fra-1", { p50: 50, p90: 90, p99: 120 });
      edge.record("DE", "fra-1", { outcomes: { ok: 100 } });
      const obs = await startObserver(prefix, join(dir, `fail-${mode}.json`));
      const key = `${prefix}observed/DE/fra-1`;
      expect(await waitFor(async () => (await client.get(key).string()) !== null, 10_000)).toBe(
        true,
      );
      const port = edge.port;
      const revision = async () => (await client.get(key).exec()).header.revision;
      const before = await revision();
      if (mode === "down") await edge.stop();
      else edge.mode = mode;
      try {
        expect(await waitFor(async () => (await obs.status()).reason === reason, 10_000)).toBe(
          true,
        );
        const st = await obs.status();
        expect(st).toMatchObject({ status: "failing", reason, edge: edge.url });
        expect(JSON.stringify(st)).not.toContain(TOKEN);
        if (mode === "junk-json") expect(JSON.stringify(st)).not.toContain("not json");
        edge.record("DE", "fra-1", { outcomes: { ok: 400, timeout: 100 } });
        await sleep(800);
        const s = await obs.scrape();
        expect(sampleValue(s, "edge_observer_polls_total", { result: reason })).toBeGreaterThan(0);
        expect(sampleValue(s, "edge_observer_edge_up")).toBe(0);
        expect(await revision()).toBe(before);
      } finally {
        if (mode === "down") await edge.start(port);
        edge.mode = "ok";
      }
      // the edge answers again: the observer says so and writes what it sees now
      expect(await waitFor(async () => (await obs.status()).status === "ok", 10_000)).toBe(true);
      expect(
        await waitFor(
          async () => JSON.parse((await client.get(key).string()) ?? "{}").error_ratio === 0.1667,
          10_000,
        ),
      ).toBe(true);
      const events = parseLogLines(obs.stdout()).map((l) => l.event);
      expect(events).toContain("poll-failing");
      expect(events).toContain("poll-recovered");
      expect(obs.stdout()).not.toContain(TOKEN);
      expect(await obs.stop()).toBe(0);
      edge.restartAggregator();
    },
  );

  it("-o json: one documented JSON line per event, started … stopped, none with the token", async () => {
    const stop = new AbortController();
    const running = runCli(
      ["-o", "json", "observe", "--edge", edge.url, "--interval", "0.2", "--ttl", "3"],
      {
        env: {
          ETCD_ENDPOINTS: etcd.endpoint,
          ROUTING_PREFIX: uniquePrefix("observe-json"),
          OBSERVE_TOKEN: "not-the-edge-token",
        },
        signal: stop.signal,
      },
    );
    await sleep(1_000);
    stop.abort();
    const r = await running;
    expect(r.code).toBe(0);
    const lines = r.stdout
      .trim()
      .split("\n")
      .map((l) => ObserveEventShape.parse(JSON.parse(l)));
    expect(lines.map((l) => l.event)).toEqual(["started", "poll-failing", "stopped"]);
    expect(lines[1]).toMatchObject({ reason: "unauthorized", edge: edge.url });
    expect(r.stdout + r.stderr).not.toContain("not-the-edge-token");
  });

  it("refuses a missing token, a missing or bad --edge, and an unreadable --token-file, with exit 1", async () => {
    const env = { ETCD_ENDPOINTS: etcd.endpoint, ROUTING_PREFIX: uniquePrefix("observe-usage") };
    const noToken = await runCli(["observe", "--edge", edge.url], { env });
    expect(noToken.code).toBe(1);
    expect(noToken.stderr).toContain("OBSERVE_TOKEN");
    const noEdge = await runCli(["observe"], { env: { ...env, OBSERVE_TOKEN: TOKEN } });
    expect(noEdge.code).toBe(1);
    expect(noEdge.stderr).toContain("--edge");
    const creds = await runCli(["observe", "--edge", "https://user:pw@edge.example"], {
      env: { ...env, OBSERVE_TOKEN: TOKEN },
    });
    expect(creds.code).toBe(1);
    expect(creds.stderr).not.toContain("pw@");
    const file = await runCli(
      ["observe", "--edge", edge.url, "--token-file", join(dir, "missing")],
      { env },
    );
    expect(file.code).toBe(1);
    expect(file.stderr).toContain("--token-file");
    const stale = await runCli(["observe", "--edge", edge.url, "--stale-after", "0"], {
      env: { ...env, OBSERVE_TOKEN: TOKEN },
    });
    expect(stale.code).toBe(1);
    expect(stale.stderr).toContain("--stale-after");
  });
});
