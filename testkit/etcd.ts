import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { freePorts } from "./ports.js";

/** A real etcd server (the version `ETCD_BIN` names: testkit/etcd-choice.ts) on loopback with a temporary data dir. */
export interface EtcdServer {
  readonly endpoint: string;
  readonly clientPort: number;
  readonly dataDir: string;
  /** Sends a signal (default SIGKILL) and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Starts etcd again on the same ports and data dir. */
  restart(): Promise<void>;
  /** Stops etcd and removes its data dir. */
  stop(): Promise<void>;
  /** Runs `etcdctl` (the first on PATH: the same version's, see `applyEtcdChoice`) against this server and returns stdout. */
  ctl(...args: string[]): string;
}

/** The etcd binary: `ETCD_BIN` (set by the entry point's `applyEtcdChoice`), else `etcd` on PATH. */
export function etcdBinary(): string {
  return process.env.ETCD_BIN ?? "etcd";
}

function etcdArgs(dataDir: string, endpoint: string, peerPort: number, extra: string[]): string[] {
  return [
    "--name",
    "test",
    "--data-dir",
    dataDir,
    "--listen-client-urls",
    endpoint,
    "--advertise-client-urls",
    endpoint,
    "--listen-peer-urls",
    `http://127.0.0.1:${peerPort}`,
    "--initial-advertise-peer-urls",
    `http://127.0.0.1:${peerPort}`,
    "--initial-cluster",
    `test=http://127.0.0.1:${peerPort}`,
    "--log-level",
    "error",
    "--logger",
    "zap",
    ...extra,
  ];
}

/** Waits until etcd at `endpoint` reports `{"health":"true"}`; throws with its log tail if it exits first. */
export async function waitHealthy(
  endpoint: string,
  child: ChildProcess,
  logs: string[],
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`etcd exited with ${child.exitCode}:\n${logs.join("").slice(-2000)}`);
    }
    try {
      const res = await fetch(`${endpoint}/health`);
      if (res.ok) {
        const body = (await res.json()) as { health?: string };
        if (body.health === "true") return;
      }
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  throw new Error(`etcd at ${endpoint} did not become healthy:\n${logs.join("").slice(-2000)}`);
}

/** Starts a fresh single-member etcd on free loopback ports. */
export async function startEtcd(opts: { extraArgs?: string[] } = {}): Promise<EtcdServer> {
  const dataDir = mkdtempSync(join(tmpdir(), "edge-etcd-"));
  let child: ChildProcess | undefined;
  let logs: string[] = [];
  let args: string[] = [];
  let clientPort = 0;
  let endpoint = "";
  const launch = async () => {
    logs = [];
    const proc = spawn(etcdBinary(), args, { stdio: ["ignore", "pipe", "pipe"] });
    child = proc;
    proc.stdout?.on("data", (d: Buffer) => logs.push(d.toString()));
    proc.stderr?.on("data", (d: Buffer) => logs.push(d.toString()));
    await waitHealthy(endpoint, proc, logs);
  };
  // A port found free can be taken before etcd binds it: then etcd exits, and new ports are tried.
  for (let attempt = 1; ; attempt++) {
    const [client, peer] = (await freePorts(2)) as [number, number];
    clientPort = client;
    endpoint = `http://127.0.0.1:${client}`;
    args = etcdArgs(dataDir, endpoint, peer, opts.extraArgs ?? []);
    try {
      await launch();
      break;
    } catch (e) {
      const inUse = logs.join("").includes("address already in use");
      if (child && child.exitCode === null) child.kill("SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
      if (!inUse || attempt >= 3) throw e;
      mkdirSync(dataDir, { mode: 0o700 });
    }
  }
  const kill = async (signal: NodeJS.Signals = "SIGKILL") => {
    const proc = child;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
    const exited = new Promise<void>((r) => proc.once("exit", () => r()));
    proc.kill(signal);
    await exited;
  };
  return {
    endpoint,
    clientPort,
    dataDir,
    kill,
    restart: launch,
    async stop() {
      await kill("SIGKILL");
      rmSync(dataDir, { recursive: true, force: true });
    },
    ctl(...ctlArgs: string[]) {
      return execFileSync("etcdctl", ["--endpoints", endpoint, ...ctlArgs], {
        encoding: "utf8",
      });
    },
  };
}
