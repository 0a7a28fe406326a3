import type { ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Etcd3 } from "etcd3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { ROOT } from "../../testkit/pusher-process.js";
import { deployedMemoryEnvironment, withoutExposedGc } from "../../testkit/unit-environment.js";
import { runCli, spawnBin, uniquePrefix, waitFor } from "./cli-harness.js";

let etcd: EtcdServer;
let client: Etcd3;
const children: ChildProcess[] = [];

beforeAll(async () => {
  etcd = await startEtcd();
  client = new Etcd3({ hosts: etcd.endpoint });
});
afterEach(() => {
  for (const c of children.splice(0))
    if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
});
afterAll(async () => {
  client?.close();
  await etcd?.stop();
});

const envFor = (prefix: string) => ({ ETCD_ENDPOINTS: etcd.endpoint, ROUTING_PREFIX: prefix });

function start(argv: string[], env: Record<string, string>) {
  const child = spawnBin(argv, env);
  children.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, exited, output: () => out };
}

describe("edgectl heartbeat (child process)", () => {
  it("kill -9: the key disappears within the TTL plus a few seconds", async () => {
    const prefix = uniquePrefix("hb-kill");
    const key = `${prefix}health/fra-1`;
    const hb = start(["heartbeat", "fra-1", "--ttl", "2", "--interval", "0.5"], envFor(prefix));
    expect(
      await waitFor(async () => (await client.get(key).string()) !== null, 45_000),
      hb.output(),
    ).toBe(true);
    expect(JSON.parse((await client.get(key).string()) ?? "null")).toEqual({ status: "healthy" });
    // still there after several TTLs: renewals work
    await sleep(4500);
    expect(await client.get(key).string()).not.toBeNull();
    hb.child.kill("SIGKILL");
    await hb.exited;
    const killedAt = Date.now();
    expect(await waitFor(async () => (await client.get(key).string()) === null, 8_000)).toBe(true);
    expect(Date.now() - killedAt).toBeLessThan(8_000);
  });

  it("SIGTERM revokes the lease at once and exits 0", async () => {
    const prefix = uniquePrefix("hb-term");
    const key = `${prefix}health/ams-1`;
    const hb = start(["heartbeat", "ams-1", "--ttl", "30", "--interval", "1"], envFor(prefix));
    expect(
      await waitFor(async () => (await client.get(key).string()) !== null, 45_000),
      hb.output(),
    ).toBe(true);
    hb.child.kill("SIGTERM");
    expect(await hb.exited).toBe(0);
    // with a 30 s TTL, only the revoke can have removed it this fast
    expect(await client.get(key).string()).toBeNull();
    const lines = hb
      .output()
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string });
    expect(
      lines.map((l) => l.event).filter((e) => e !== "renew-failing" && e !== "renew-recovered"),
    ).toEqual(["registered", "stopped"]);
  });
});

describe("edgectl heartbeat: the idle heap trim (its unit's --expose-gc)", () => {
  /** The heartbeat's log lines until it has said `msg` (debug level), then SIGTERM. */
  async function logUntil(tag: string, msg: string, extraEnv: Record<string, string>) {
    const prefix = uniquePrefix(tag);
    const hb = start(["heartbeat", "trim-1", "--ttl", "5", "--interval", "1"], {
      ...envFor(prefix),
      LOG_LEVEL: "debug",
      ...extraEnv,
    });
    const said = () =>
      hb
        .output()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map(
          (l) => JSON.parse(l) as { msg: string; rss_mb_before?: number; rss_mb_after?: number },
        );
    const found = await waitFor(async () => said().some((l) => l.msg === msg), 30_000);
    hb.child.kill("SIGTERM");
    expect(await hb.exited).toBe(0);
    expect(found, hb.output()).toBe(true);
    return said();
  }

  it("runs once the heartbeat is quiet, and hands heap back", async () => {
    const lines = await logUntil(
      "hb-trim",
      "idle heap trim",
      deployedMemoryEnvironment(ROOT, "edge-heartbeat@.service"),
    );
    const trim = lines.find((l) => l.msg === "idle heap trim");
    expect(trim?.rss_mb_after).toBeLessThan(trim?.rss_mb_before ?? 0);
  });

  it("is off without the unit's --expose-gc, and says so", async () => {
    const lines = await logUntil(
      "hb-untuned",
      "V8's gc not exposed (no --expose-gc in NODE_OPTIONS): no idle heap trim",
      withoutExposedGc(deployedMemoryEnvironment(ROOT, "edge-heartbeat@.service")),
    );
    expect(lines.some((l) => l.msg === "idle heap trim")).toBe(false);
  });
});

describe("edgectl heartbeat (in-process)", () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise<void>((r) => (server ? server.close(() => r()) : r()));
    server = undefined;
  });

  /** An in-process `heartbeat par-1` whose check URL answers 200 or 503 as the test says. */
  async function checkedHeartbeat(tag: string, healthyAtStart: boolean) {
    const check = { healthy: healthyAtStart, hits: 0 };
    server = createServer((_req, res) => {
      check.hits++;
      res.statusCode = check.healthy ? 200 : 503;
      res.end();
    });
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/health`;
    const prefix = uniquePrefix(tag);
    const key = `${prefix}health/par-1`;
    const stop = new AbortController();
    const argv = ["heartbeat", "par-1", "--ttl", "2", "--interval", "0.2"];
    const running = runCli([...argv, "--check-timeout", "2", "--check-url", url], {
      env: envFor(prefix),
      signal: stop.signal,
    });
    const status = async () =>
      JSON.parse((await client.get(key).string()) ?? "{}").status as string | undefined;
    /** The check passes again: `healthy` after at least 2 successes. */
    const recovers = async () => {
      check.healthy = true;
      const okFrom = check.hits;
      expect(await waitFor(async () => (await status()) === "healthy", 10_000)).toBe(true);
      expect(check.hits - okFrom).toBeGreaterThanOrEqual(2);
    };
    return { check, key, stop, running, status, recovers };
  }

  it("a failing check URL flips the status after 3 failures and back after 2 successes", async () => {
    const { check, key, stop, running, status, recovers } = await checkedHeartbeat(
      "hb-check",
      true,
    );
    try {
      expect(await waitFor(async () => (await status()) === "healthy", 10_000)).toBe(true);
      check.healthy = false;
      const failingFrom = check.hits;
      expect(await waitFor(async () => (await status()) === "unhealthy", 10_000)).toBe(true);
      expect(check.hits - failingFrom).toBeGreaterThanOrEqual(3);
      // the key stays on a live lease while unhealthy
      expect((await client.get(key).exec()).kvs[0]?.lease).not.toBe("0");
      await recovers();
    } finally {
      stop.abort();
    }
    const r = await running;
    expect(r.code, r.stderr).toBe(0);
    expect(await client.get(key).string()).toBeNull();
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; status: string });
    expect(events.filter((e) => e.event === "status-changed").map((e) => e.status)).toEqual([
      "unhealthy",
      "healthy",
    ]);
  });

  it("registers unhealthy when the check fails at start-up, healthy after 2 successes", async () => {
    const { stop, running, status, recovers } = await checkedHeartbeat("hb-cold", false);
    try {
      expect(await waitFor(async () => (await status()) !== undefined, 10_000)).toBe(true);
      expect(await status()).toBe("unhealthy");
      await recovers();
    } finally {
      stop.abort();
    }
    expect((await running).code).toBe(0);
  });

  it("re-registers on a new lease when etcd says the lease is gone", async () => {
    const prefix = uniquePrefix("hb-lost");
    const key = `${prefix}health/fra-2`;
    const stop = new AbortController();
    const running = runCli(["heartbeat", "fra-2", "--ttl", "3", "--interval", "0.3"], {
      env: envFor(prefix),
      signal: stop.signal,
    });
    try {
      expect(await waitFor(async () => (await client.get(key).string()) !== null, 10_000)).toBe(
        true,
      );
      const first = (await client.get(key).exec()).kvs[0]?.lease ?? "0";
      await client.leaseClient.leaseRevoke({ ID: first });
      const relisted = await waitFor(async () => {
        const lease = (await client.get(key).exec()).kvs[0]?.lease;
        return lease !== undefined && lease !== first;
      }, 10_000);
      expect(relisted).toBe(true);
    } finally {
      stop.abort();
    }
    const r = await running;
    expect(r.code).toBe(0);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { event: string }).event)
      .filter((e) => e !== "renew-failing" && e !== "renew-recovered");
    expect(events).toEqual(["registered", "lease-lost", "registered", "stopped"]);
  });

  it("re-registers after etcd was down for longer than the TTL", async () => {
    const own = await startEtcd();
    const ownClient = new Etcd3({ hosts: own.endpoint });
    const prefix = uniquePrefix("hb-down");
    const key = `${prefix}health/fra-3`;
    const stop = new AbortController();
    const running = runCli(["heartbeat", "fra-3", "--ttl", "2", "--interval", "0.3"], {
      env: {
        ETCD_ENDPOINTS: own.endpoint,
        ROUTING_PREFIX: prefix,
        EDGECTL_ETCD_TIMEOUT_MS: "1000",
      },
      signal: stop.signal,
    });
    try {
      expect(await waitFor(async () => (await ownClient.get(key).string()) !== null, 10_000)).toBe(
        true,
      );
      await own.kill("SIGKILL");
      await sleep(3500);
      await own.restart();
      // back on a live lease after the outage, and it stays (renewals resumed)
      expect(
        await waitFor(
          async () =>
            (await ownClient
              .get(key)
              .string()
              .catch(() => null)) !== null,
          20_000,
        ),
      ).toBe(true);
      await sleep(4000);
      expect(await ownClient.get(key).string()).not.toBeNull();
    } finally {
      stop.abort();
      const r = await running;
      ownClient.close();
      await own.stop();
      expect(r.code).toBe(0);
      expect(r.stdout).toContain('"event":"lease-lost"');
    }
  });
});
