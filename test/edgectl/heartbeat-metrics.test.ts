import type { ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { freePort } from "../../testkit/ports.js";
import { parsePromText, sampleValue } from "../../testkit/prom-text.js";
import { getWithHost } from "../helpers/host-request.js";
import { parseLogLines } from "../helpers/log-schema.js";
import { runCli, spawnBin, uniquePrefix, waitFor } from "./cli-harness.js";

let etcd: EtcdServer;
let client: Etcd3;
let check: Server;
let checkFails = false;
const children: ChildProcess[] = [];

beforeAll(async () => {
  etcd = await startEtcd();
  client = new Etcd3({ hosts: etcd.endpoint });
  check = createServer((_req, res) => res.writeHead(checkFails ? 503 : 200).end());
  await new Promise<void>((r) => check.listen(0, "127.0.0.1", r));
});
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  await new Promise((r) => check?.close(r));
  client?.close();
  await etcd?.stop();
});

const checkUrl = () => `http://127.0.0.1:${(check.address() as AddressInfo).port}/healthz`;

describe("edgectl heartbeat --listen", () => {
  it("serves status, renewals, check failures and lost leases on /metrics, and logs the schema", async () => {
    const prefix = uniquePrefix("hb-metrics");
    const key = `${prefix}health/fra-9`;
    const port = await freePort();
    const argv = ["heartbeat", "fra-9", "--ttl", "3", "--interval", "0.2"];
    const child = spawnBin([...argv, "--check-url", checkUrl(), "--listen", `127.0.0.1:${port}`], {
      ETCD_ENDPOINTS: etcd.endpoint,
      ROUTING_PREFIX: prefix,
    });
    children.push(child);
    let stdout = "";
    let stderr = "";
    child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const url = `http://127.0.0.1:${port}`;
    const scrape = async () => parsePromText(await (await fetch(`${url}/metrics`)).text());
    const value = async (name: string, labels: Record<string, string> = {}) =>
      sampleValue(await scrape().catch(() => []), name, { pool: "fra-9", ...labels });

    expect(
      await waitFor(async () => (await value("edge_heartbeat_registered")) === 1, 30_000),
      stdout + stderr,
    ).toBe(true);
    const first = await scrape();
    expect(sampleValue(first, "edge_heartbeat_status", { status: "healthy" })).toBe(1);
    expect(sampleValue(first, "edge_heartbeat_status", { status: "unhealthy" })).toBe(0);
    expect(sampleValue(first, "edge_heartbeat_check_failures_total", { reason: "status" })).toBe(0);
    expect(sampleValue(first, "edge_heartbeat_check_failures_total", { reason: "timeout" })).toBe(
      0,
    );
    expect(sampleValue(first, "edge_heartbeat_lease_lost_total")).toBe(0);
    expect(sampleValue(first, "edge_heartbeat_registrations_total")).toBe(1);
    expect(sampleValue(first, "edge_heartbeat_build_info")).toBe(1);
    expect(sampleValue(first, "process_cpu_user_seconds_total")).toBeGreaterThan(0);
    // The idle heap trim's collection, if no other full one came first: the live heap is known.
    expect(
      await waitFor(
        async () => (sampleValue(await scrape(), "edge_heartbeat_heap_live_bytes") ?? 0) > 2 ** 20,
        15_000,
      ),
    ).toBe(true);
    const renewedAt = sampleValue(first, "edge_heartbeat_last_renewal_timestamp_seconds") ?? 0;
    expect(Math.abs(renewedAt - Date.now() / 1000)).toBeLessThan(10);
    // renewals run every 0.2 s: the timestamp moves on
    expect(
      await waitFor(
        async () =>
          ((await value("edge_heartbeat_last_renewal_timestamp_seconds")) ?? 0) > renewedAt,
        5_000,
      ),
    ).toBe(true);
    expect((await fetch(`${url}/status`)).status).toBe(404);

    // The check fails: failures are counted, and after 3 the status turns unhealthy.
    checkFails = true;
    expect(
      await waitFor(
        async () => (await value("edge_heartbeat_status", { status: "unhealthy" })) === 1,
        10_000,
      ),
    ).toBe(true);
    expect(
      await value("edge_heartbeat_check_failures_total", { reason: "status" }),
    ).toBeGreaterThanOrEqual(3);
    expect(
      await waitFor(
        async () => JSON.parse((await client.get(key).string()) ?? "{}").status === "unhealthy",
        5_000,
      ),
    ).toBe(true);
    checkFails = false;

    // etcd drops the lease: counted as lost, then registered again.
    const lease = (await client.get(key).exec()).kvs[0]?.lease ?? "0";
    await client.leaseClient.leaseRevoke({ ID: lease });
    expect(
      await waitFor(async () => {
        const s = await scrape();
        return (
          sampleValue(s, "edge_heartbeat_lease_lost_total") === 1 &&
          sampleValue(s, "edge_heartbeat_registrations_total") === 2 &&
          sampleValue(s, "edge_heartbeat_registered") === 1
        );
      }, 10_000),
    ).toBe(true);

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    const lines = parseLogLines(stdout);
    expect(lines.every((l) => l.service === "edge-heartbeat")).toBe(true);
    expect(lines.find((l) => l.msg === "serving /metrics")?.listen).toBe(`127.0.0.1:${port}`);
    const events = lines.map((l) => l.event).filter((e) => e !== undefined);
    expect(events).toContain("lease-lost");
    expect(events.at(-1)).toBe("stopped");
    expect(events.filter((e) => e === "registered")).toHaveLength(2);
  });

  it("says how each check failed, in its log and its metrics: the status it got, a timeout, a refused connection", async () => {
    let mode: "ok" | "503" | "slow" = "ok";
    let inFlight = 0;
    const origin = createServer((_req, res) => {
      inFlight++;
      res.once("close", () => inFlight--);
      if (mode === "slow") setTimeout(() => res.writeHead(200).end(), 1_500);
      else res.writeHead(mode === "503" ? 503 : 200).end();
    });
    await new Promise<void>((r) => origin.listen(0, "127.0.0.1", r));
    const originPort = (origin.address() as AddressInfo).port;
    const port = await freePort();
    const child = spawnBin(
      [
        ...["heartbeat", "fra-6", "--ttl", "3", "--interval", "0.2", "--check-timeout", "0.3"],
        ...[
          "--check-url",
          `http://127.0.0.1:${originPort}/healthz`,
          "--listen",
          `127.0.0.1:${port}`,
        ],
      ],
      { ETCD_ENDPOINTS: etcd.endpoint, ROUTING_PREFIX: uniquePrefix("hb-why") },
    );
    children.push(child);
    let stdout = "";
    child.stdout?.on("data", (d: Buffer) => (stdout += d.toString()));
    const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    const value = async (name: string, labels: Record<string, string> = {}) =>
      sampleValue(
        parsePromText(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text()),
        name,
        { pool: "fra-6", ...labels },
      );
    const failures = (reason: string) =>
      value("edge_heartbeat_check_failures_total", { reason }).catch(() => undefined);
    const seen = (what: string, fn: () => Promise<boolean>) =>
      waitFor(fn, 15_000).then((ok) => expect(ok, `${what}\n${stdout}`).toBe(true));

    // The failure counters exist from the start; the status gauge only after the first check.
    await seen(
      "the first check's 200",
      async () => (await value("edge_heartbeat_check_http_status").catch(() => undefined)) === 200,
    );
    expect(await failures("status")).toBe(0);
    mode = "503";
    await seen("3 × 503", async () => ((await failures("status")) ?? 0) >= 3);
    expect(await value("edge_heartbeat_check_http_status")).toBe(503);
    mode = "slow";
    await seen("a timeout", async () => ((await failures("timeout")) ?? 0) >= 1);
    expect(await value("edge_heartbeat_check_http_status")).toBe(0);
    // Closed between two checks: closing under a slow check in flight resets its connection,
    // a fourth kind of failure this test does not ask for.
    await seen("no check in flight", async () => inFlight === 0);
    await new Promise((r) => {
      origin.close(r);
      origin.closeAllConnections();
    });
    await seen("a refused connection", async () => ((await failures("refused")) ?? 0) >= 1);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);

    const lines = parseLogLines(stdout);
    const failed = lines.filter((l) => l.event === "check-failed");
    expect(failed.map((l) => [l.check, l.http_status, l.detail])).toEqual([
      ["status", 503, "HTTP 503"],
      ["timeout", undefined, "timed out after 300 ms"],
      ["refused", undefined, `connection refused: connect ECONNREFUSED 127.0.0.1:${originPort}`],
    ]);
    expect(failed.every((l) => l.level === 40)).toBe(true);
    const down = lines.find((l) => l.event === "status-changed" && l.status === "unhealthy");
    expect(down).toMatchObject({
      check: "status",
      http_status: 503,
      detail: "check failing: HTTP 503",
    });
  });

  it("logs a failed registration's error under err", async () => {
    const stop = new AbortController();
    const closed = await freePort();
    const running = runCli(["heartbeat", "fra-8", "--ttl", "3", "--interval", "0.2"], {
      env: { ETCD_ENDPOINTS: `http://127.0.0.1:${closed}`, EDGECTL_ETCD_TIMEOUT_MS: "300" },
      signal: stop.signal,
    });
    // no member answers: the first registration fails (and is retried until the stop)
    await sleep(1_500);
    stop.abort();
    const r = await running;
    expect(r.code).toBe(0);
    const failed = parseLogLines(r.stdout).find((l) => l.event === "register-failed");
    expect(failed?.level).toBe(50);
    expect(failed?.err).toMatchObject({ type: expect.any(String), message: expect.any(String) });
  });

  it("refuses a --listen that is not HOST:PORT, or a port in use, with exit 1", async () => {
    const env = { ETCD_ENDPOINTS: etcd.endpoint, ROUTING_PREFIX: uniquePrefix("hb-listen") };
    const bad = await runCli(["heartbeat", "fra-7", "--listen", "nonsense"], { env });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--listen: "nonsense" is not HOST:PORT');
    const taken = `127.0.0.1:${(check.address() as AddressInfo).port}`;
    const busy = await runCli(["heartbeat", "fra-7", "--listen", taken], { env });
    expect(busy.code).toBe(1);
    expect(busy.stderr).toContain(`--listen: cannot listen on ${taken}`);
    expect(await client.get(`${env.ROUTING_PREFIX}health/fra-7`).string()).toBeNull();
  });

  it("answers /metrics only to its own Host names and --allowed-hosts (DNS rebinding): others get 421", async () => {
    const env = { ETCD_ENDPOINTS: etcd.endpoint, ROUTING_PREFIX: uniquePrefix("hb-host") };
    const bad = await runCli(
      ["heartbeat", "fra-6", "--listen", "127.0.0.1:0", "--allowed-hosts", "http://x.example"],
      { env },
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--allowed-hosts: "http://x.example" is not a host name');
    const port = await freePort();
    const stop = new AbortController();
    const running = runCli(
      [
        "heartbeat",
        "fra-6",
        "--ttl",
        "3",
        "--listen",
        `127.0.0.1:${port}`,
        "--allowed-hosts",
        "fra-6-checker.example.net",
      ],
      { env, signal: stop.signal },
    );
    try {
      const up = await waitFor(
        async () =>
          (await getWithHost(port, "/metrics", `127.0.0.1:${port}`).catch(() => null))?.status ===
          200,
        30_000,
      );
      expect(up).toBe(true);
      expect((await getWithHost(port, "/metrics", `localhost:${port}`)).status).toBe(200);
      expect(
        (await getWithHost(port, "/metrics", `fra-6-checker.example.net:${port}`)).status,
      ).toBe(200);
      const evil = await getWithHost(port, "/metrics", `rebind.evil.example:${port}`);
      expect(evil.status).toBe(421);
      expect(JSON.parse(evil.body)).toMatchObject({ reason: "host-not-allowed" });
      expect(evil.body).toContain("--allowed-hosts");
    } finally {
      stop.abort();
      expect((await running).code).toBe(0);
    }
  });
});
