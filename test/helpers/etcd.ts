import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.js";

/** A real etcd server (Debian's `etcd-server`) on loopback with a temporary data dir. */
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
  /** Runs `etcdctl` against this server and returns stdout. */
  ctl(...args: string[]): string;
}

/** Locates the etcd binary: $ETCD_BIN, PATH, or Debian's /usr/bin/etcd. */
export function etcdBinary(): string {
  return process.env.ETCD_BIN ?? "etcd";
}

async function waitHealthy(endpoint: string, child: ChildProcess, logs: string[]): Promise<void> {
  const deadline = Date.now() + 20_000;
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
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`etcd at ${endpoint} did not become healthy:\n${logs.join("").slice(-2000)}`);
}

/** Starts a fresh single-member etcd on free loopback ports. */
export async function startEtcd(opts: { extraArgs?: string[] } = {}): Promise<EtcdServer> {
  const clientPort = await freePort();
  const peerPort = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), "edge-etcd-"));
  const endpoint = `http://127.0.0.1:${clientPort}`;
  const args = [
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
    ...(opts.extraArgs ?? []),
  ];
  let child: ChildProcess;
  let logs: string[] = [];
  const launch = async () => {
    logs = [];
    child = spawn(etcdBinary(), args, { stdio: ["ignore", "pipe", "pipe"] });
    child.stdout?.on("data", (d: Buffer) => logs.push(d.toString()));
    child.stderr?.on("data", (d: Buffer) => logs.push(d.toString()));
    await waitHealthy(endpoint, child, logs);
  };
  const kill = async (signal: NodeJS.Signals = "SIGKILL") => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    child.kill(signal);
    await exited;
  };
  await launch();
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
        env: { ...process.env, ETCDCTL_API: "3" },
        encoding: "utf8",
      });
    },
  };
}
