import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { Etcd3 } from "etcd3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { type EtcdServer, startEtcd } from "../../testkit/etcd.js";
import { type KvStandin, startKvStandin } from "../../testkit/kv-standin.js";
import { freePort } from "../../testkit/ports.js";
import { parseLogLines } from "../helpers/log-schema.js";
import { type PrometheusServer, startPrometheus } from "../helpers/prometheus.js";
import { seedRouting, testClient, uniqueNames } from "../pusher/harness.js";

const BIN = resolve(import.meta.dirname, "../../bin/edge-pusher.js");
const RULES = resolve(import.meta.dirname, "../../deploy/prometheus/alerts.yml");
const ALERT = "EdgePusherKvWriteFailures";

/**
 * The shipped rules with one change: the KV alert's `for: 2m` becomes `for: 1s`, so the test
 * waits seconds, not minutes. Its expression (failures in the last 2 minutes) is unchanged.
 */
function rulesForTest(): unknown {
  const doc = parse(readFileSync(RULES, "utf8")) as {
    groups: { rules: { alert?: string; for?: string }[] }[];
  };
  const rule = doc.groups.flatMap((g) => g.rules).find((r) => r.alert === ALERT);
  if (!rule) throw new Error(`${ALERT} is not in alerts.yml`);
  expect(rule.for).toBe("2m");
  rule.for = "1s";
  return doc;
}

async function until<T>(what: string, fn: () => Promise<T | null>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

let etcd: EtcdServer;
let client: Etcd3;
let kv: KvStandin;
let prometheus: PrometheusServer | undefined;
let pusher: ChildProcess | undefined;
let pusherOut = "";
const cwd = mkdtempSync(join(tmpdir(), "edge-pusher-prom-"));

beforeAll(async () => {
  etcd = await startEtcd();
  client = testClient(etcd.endpoint);
  // Off: with `for:` shortened to 1 s, one same-key 429 (arrival jitter around the pusher's
  // 1 s spacing) would fire the alert before the break; that limit is tested elsewhere.
  kv = await startKvStandin({ perKeyWriteLimit: "off" });
});
afterAll(async () => {
  if (pusher && pusher.exitCode === null) {
    const exited = new Promise((r) => pusher?.once("exit", r));
    pusher.kill("SIGKILL");
    await exited;
  }
  await prometheus?.stop();
  await kv?.close();
  client?.close();
  await etcd?.stop();
  rmSync(cwd, { recursive: true, force: true });
});

describe("a real Prometheus scraping a real pusher", () => {
  it("fires the KV write failures alert once KV writes break, and not before", async () => {
    const { prefix, electionKey } = uniqueNames();
    await seedRouting(client, prefix);
    const port = await freePort();
    pusher = spawn(process.execPath, [BIN], {
      cwd,
      env: {
        PATH: process.env.PATH ?? "",
        HOME: process.env.HOME ?? "/tmp",
        ETCD_ENDPOINTS: etcd.endpoint,
        ROUTING_PREFIX: prefix,
        PUSHER_ELECTION_KEY: electionKey,
        PUSHER_ELECTION_TTL: "2",
        KV_SINK: "cloudflare",
        CF_API_BASE_URL: kv.url,
        CF_ACCOUNT_ID: kv.accountId,
        CF_API_TOKEN: kv.token,
        KV_NAMESPACE_ID: kv.namespaceId,
        PUSHER_LISTEN: `127.0.0.1:${port}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    pusher.stdout?.on("data", (d: Buffer) => (pusherOut += d.toString()));
    pusher.stderr?.on("data", (d: Buffer) => (pusherOut += d.toString()));
    prometheus = await startPrometheus({ rules: rulesForTest(), targets: [`127.0.0.1:${port}`] });
    const prom = prometheus;
    const scalar = async (expr: string) => {
      const [first] = await prom.query(expr);
      return first ? Number(first.value[1]) : null;
    };

    // Healthy: Prometheus scrapes the leader, which has written KV without a single failure.
    await until(
      "the target up and a push scraped",
      async () => {
        const [target] = await prom.targets();
        const pushes = await scalar("edge_pusher_pushes_total");
        return target?.health === "up" && pushes !== null && pushes > 0 ? true : null;
      },
      30_000,
    );
    expect(await scalar("edge_pusher_is_leader")).toBe(1);
    expect(await scalar("edge_pusher_push_errors_total")).toBe(0);
    expect(await scalar('edge_pusher_build_info{version!=""}')).toBe(1);
    // A few scrapes and rule evaluations (1 s each) of the healthy pusher.
    await sleep(3_000);
    expect((await prom.alerts()).filter((a) => a.labels.alertname === ALERT)).toEqual([]);

    // Break every KV request, then make a change the pusher must write.
    kv.setFaults({ ratio: 1, weights: { "server-error": 1 } });
    await client
      .put(`${prefix}country/FR`)
      .value(JSON.stringify({ primary: "fra-1", fallbacks: ["ams-1"] }));
    const firing = await until(
      `${ALERT} firing`,
      async () => {
        const a = (await prom.alerts()).find((x) => x.labels.alertname === ALERT);
        return a?.state === "firing" ? a : null;
      },
      30_000,
    );
    expect(firing.labels).toMatchObject({
      severity: "warning",
      job: "edge-pusher",
      instance: `127.0.0.1:${port}`,
    });
    expect(firing.annotations.runbook).toBe("docs/operating.md#edgepusherkvwritefailures");
    expect(await scalar("edge_pusher_push_errors_total")).toBeGreaterThan(0);

    // The pusher's real log lines follow the shared schema, its KV failures among them.
    const lines = parseLogLines(pusherOut);
    expect(lines.every((l) => l.service === "edge-pusher")).toBe(true);
    const failed = lines.filter((l) => l.msg === "KV write failed");
    expect(failed.length).toBeGreaterThan(0);
    expect(failed[0]?.err).toBeTruthy();
    expect(pusherOut).not.toContain(kv.token);
  });
});
