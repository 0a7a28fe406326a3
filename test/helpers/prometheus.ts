import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { stringify } from "yaml";
import { freePort } from "../../testkit/ports.js";

/** One alert as Prometheus's `GET /api/v1/alerts` lists it. */
export interface PrometheusAlert {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly state: "pending" | "firing";
  readonly value: string;
}

/** One scrape target as `GET /api/v1/targets` lists it. */
export interface PrometheusTarget {
  readonly scrapeUrl: string;
  readonly health: "up" | "down" | "unknown";
  readonly lastError: string;
}

/** One alerting rule as `GET /api/v1/rules?type=alert` lists it. */
export interface PrometheusAlertingRule {
  readonly name: string;
  readonly state: "inactive" | "pending" | "firing";
  readonly health: "ok" | "err" | "unknown";
  readonly lastError?: string;
  /** RFC 3339 time of the rule's last evaluation. */
  readonly lastEvaluation: string;
}

/** A real Prometheus server (Debian's `prometheus`) on 127.0.0.1 with a temporary data dir. */
export interface PrometheusServer {
  readonly url: string;
  alerts(): Promise<PrometheusAlert[]>;
  targets(): Promise<PrometheusTarget[]>;
  /** Every alerting rule of every group, with its state and last evaluation. */
  alertingRules(): Promise<PrometheusAlertingRule[]>;
  /** An instant query's vector result (`[labels, value]` per series). */
  query(expr: string): Promise<{ metric: Record<string, string>; value: [number, string] }[]>;
  /** The process's output so far, for a failure message. */
  output(): string;
  /** Stops Prometheus (SIGTERM, then SIGKILL) and removes its directory. */
  stop(): Promise<void>;
}

/** What to run: the rule groups (a parsed alerts.yml) and the targets of one scrape job. */
export interface PrometheusOptions {
  readonly rules: unknown;
  readonly targets: readonly string[];
  readonly job?: string;
  /** Scrape and evaluation interval (default `1s`). */
  readonly interval?: string;
}

async function api<T>(url: string): Promise<T> {
  const res = await fetch(url);
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== "success") throw new Error(`${url}: ${body.error ?? res.status}`);
  return body.data;
}

/** Starts `prometheus` and waits until `/-/ready` answers. */
export async function startPrometheus(o: PrometheusOptions): Promise<PrometheusServer> {
  const dir = mkdtempSync(join(tmpdir(), "edge-prometheus-"));
  const interval = o.interval ?? "1s";
  writeFileSync(join(dir, "alerts.yml"), stringify(o.rules));
  writeFileSync(
    join(dir, "prometheus.yml"),
    stringify({
      global: { scrape_interval: interval, evaluation_interval: interval },
      rule_files: ["alerts.yml"],
      scrape_configs: [
        { job_name: o.job ?? "edge-pusher", static_configs: [{ targets: [...o.targets] }] },
      ],
    }),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(
    process.env.PROMETHEUS_BIN ?? "prometheus",
    [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { cwd: dir, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      const killer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`prometheus exited with ${child.exitCode}: ${out}`);
    }
    const ready = await fetch(`${url}/-/ready`).then(
      (r) => r.ok,
      () => false,
    );
    if (ready) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus not ready within 20 s: ${out}`);
    }
    await sleep(100);
  }
  return {
    url,
    alerts: async () => (await api<{ alerts: PrometheusAlert[] }>(`${url}/api/v1/alerts`)).alerts,
    targets: async () =>
      (await api<{ activeTargets: PrometheusTarget[] }>(`${url}/api/v1/targets`)).activeTargets,
    alertingRules: async () =>
      (
        await api<{ groups: { rules: PrometheusAlertingRule[] }[] }>(
          `${url}/api/v1/rules?type=alert`,
        )
      ).groups.flatMap((g) => g.rules),
    query: async (expr) =>
      (
        await api<{ result: { metric: Record<string, string>; value: [number, string] }[] }>(
          `${url}/api/v1/query?query=${encodeURIComponent(expr)}`,
        )
      ).result,
    output: () => out,
    stop,
  };
}
