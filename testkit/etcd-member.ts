import { type ChildProcess, spawn } from "node:child_process";
import { setTimeout as sleep } from "node:timers/promises";
import { etcdBinary, waitHealthy } from "./etcd.js";

/** What one member of a test etcd cluster reports about itself (`Maintenance.Status`). */
export interface MemberStatus {
  /** This member's id in hex, as etcd prints it and sends it in `X-Server-From`. */
  readonly memberId: string;
  /** The leader it knows of, in hex, or undefined when it has none. */
  readonly leaderId: string | undefined;
  readonly raftTerm: number;
  readonly revision: number;
  /** The cluster id in hex. */
  readonly clusterId: string;
  /** etcd's own error list, e.g. "etcdserver: no leader". */
  readonly errors: readonly string[];
}

/** One etcd process of a test cluster: fixed ports and flags, a data dir that a restore may replace. */
export interface EtcdMember {
  readonly name: string;
  readonly endpoint: string;
  readonly clientPort: number;
  dataDir: string;
  /** The process's output since its last start. */
  readonly logs: string;
  readonly running: boolean;
  /** Spawns etcd; resolves once it reports healthy (`waitHealthy`) or merely answers HTTP. */
  start(wait: "healthy" | "listening", timeoutMs?: number): Promise<void>;
  /** Sends a signal (default SIGKILL) and waits for the process to exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
  /** Asks this member for its status over the gRPC gateway; undefined when it does not answer. */
  status(timeoutMs?: number): Promise<MemberStatus | undefined>;
}

/** Converts etcd's decimal uint64 (as the gateway's JSON carries it) to the hex etcd prints. */
export function hexId(decimal: string): string {
  return BigInt(decimal).toString(16);
}

async function waitListening(
  endpoint: string,
  child: ChildProcess,
  logs: string[],
  timeoutMs: number,
) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`etcd exited with ${child.exitCode}:\n${logs.join("").slice(-2000)}`);
    }
    try {
      await fetch(`${endpoint}/version`, { signal: AbortSignal.timeout(500) });
      return;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  throw new Error(`etcd at ${endpoint} did not listen:\n${logs.join("").slice(-2000)}`);
}

/** Describes a member; `args(dataDir)` gives its command line for the data dir in use. */
export function etcdMember(spec: {
  name: string;
  clientPort: number;
  dataDir: string;
  args: (dataDir: string) => string[];
}): EtcdMember {
  const endpoint = `http://127.0.0.1:${spec.clientPort}`;
  let child: ChildProcess | undefined;
  let logs: string[] = [];
  const member: EtcdMember = {
    name: spec.name,
    endpoint,
    clientPort: spec.clientPort,
    dataDir: spec.dataDir,
    get logs() {
      return logs.join("");
    },
    get running() {
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    async start(wait, timeoutMs = 20_000) {
      if (member.running) throw new Error(`etcd member ${spec.name} is already running`);
      const out: string[] = [];
      logs = out;
      const proc = spawn(etcdBinary(), spec.args(member.dataDir), {
        stdio: ["ignore", "pipe", "pipe"],
      });
      child = proc;
      proc.stdout?.on("data", (d: Buffer) => out.push(d.toString()));
      proc.stderr?.on("data", (d: Buffer) => out.push(d.toString()));
      if (wait === "healthy") await waitHealthy(endpoint, proc, out, timeoutMs);
      else await waitListening(endpoint, proc, out, timeoutMs);
    },
    async kill(signal = "SIGKILL") {
      const proc = child;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise<void>((r) => proc.once("exit", () => r()));
      proc.kill(signal);
      await exited;
    },
    async status(timeoutMs = 1000) {
      if (!member.running) return undefined;
      try {
        const res = await fetch(`${endpoint}/v3/maintenance/status`, {
          method: "POST",
          body: "{}",
          signal: AbortSignal.timeout(timeoutMs),
        });
        if (!res.ok) return undefined;
        const body = (await res.json()) as {
          header?: { member_id?: string; cluster_id?: string; revision?: string };
          leader?: string;
          raftTerm?: string;
          errors?: string[];
        };
        const leader = body.leader ?? "0";
        return {
          memberId: hexId(body.header?.member_id ?? "0"),
          leaderId: leader === "0" ? undefined : hexId(leader),
          raftTerm: Number(body.raftTerm ?? 0),
          revision: Number(body.header?.revision ?? 0),
          clusterId: hexId(body.header?.cluster_id ?? "0"),
          errors: body.errors ?? [],
        };
      } catch {
        return undefined;
      }
    },
  };
  return member;
}
