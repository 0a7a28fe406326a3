import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";
import { type EtcdMember, etcdMember, type MemberStatus } from "./etcd-member.js";
import { peerPartitions } from "./peer-partitions.js";
import { freePorts } from "./ports.js";
import { startTcpProxy, type TcpProxy } from "./tcp-proxy.js";

export type { MemberStatus } from "./etcd-member.js";

const run = promisify(execFile);

/**
 * The tool that restores a snapshot: `etcdutl` (etcd 3.5 on; 3.6 removed `etcdctl snapshot
 * restore`), or `etcdctl` where no `etcdutl` is installed (etcd 3.4).
 */
export async function snapshotTool(): Promise<"etcdutl" | "etcdctl"> {
  try {
    await run("etcdutl", ["version"]);
    return "etcdutl";
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return "etcdctl";
    throw e;
  }
}

/**
 * Raft timing of the test cluster: etcd's own defaults (heartbeat 100 ms, election 1000 ms), which
 * elect a new leader about 1–2 s after the old one dies and are slow enough not to flap on a busy
 * 2-core machine. `--pre-vote=true` (default only from 3.6) keeps a cut-off member from raising
 * the term and disrupting the majority when it comes back.
 */
export const clusterTiming = { heartbeatMs: 100, electionMs: 1000 } as const;

/** A 3-member (or `size`-member) etcd cluster on 127.0.0.1, each peer port behind a TCP proxy. */
export interface EtcdCluster {
  readonly size: number;
  /** Client URLs, one per member, in member order. */
  readonly endpoints: readonly string[];
  readonly names: readonly string[];
  /** Member ids in hex (as in `X-Server-From` and `etcdctl member list`), in member order. */
  readonly memberIds: readonly string[];
  /** The peer proxies, in member order (members advertise these addresses). */
  readonly peerProxies: readonly TcpProxy[];
  readonly members: readonly EtcdMember[];
  /** Endpoints of the members whose process is running. */
  runningEndpoints(): string[];
  status(i: number): Promise<MemberStatus | undefined>;
  /** SIGKILLs member i (or another signal) and waits for it to exit. */
  kill(i: number, signal?: NodeJS.Signals): Promise<void>;
  /** Starts member i again on its data dir; waits until healthy unless `wait: "listening"`. */
  restart(i: number, opts?: { wait?: "healthy" | "listening"; timeoutMs?: number }): Promise<void>;
  /** The member the running members at the highest term name as leader, if any. */
  leaderIndex(): Promise<number | undefined>;
  /** Waits until a leader is known and agrees it is leader (optionally not member `not`). */
  waitLeader(opts?: { not?: number; timeoutMs?: number }): Promise<number>;
  /**
   * Cuts member i off from its peers: its proxy refuses and closes every connection, and the other
   * proxies refuse and close connections whose first request carries `X-Server-From: <its id>`.
   */
  partition(i: number): void;
  /** Lets member i talk to its peers again. */
  heal(i: number): void;
  /** Runs etcdctl against member `member`, or against every running member. Resolves stdout. */
  ctl(args: readonly string[], member?: number): Promise<string>;
  /** `etcdctl snapshot save` from a running member (the leader if one is known). */
  snapshotSave(path: string): Promise<void>;
  /**
   * Stops every member and restores each from `path` into a new data dir (same names and peer
   * URLs, same cluster token unless `newToken`), then starts them and waits until healthy.
   */
  restoreFromSnapshot(path: string, opts?: { newToken?: boolean }): Promise<void>;
  /** Kills every member, closes the proxies and removes all data dirs. */
  stop(): Promise<void>;
}

/** Options of {@link startEtcdCluster}. */
export interface EtcdClusterOptions {
  readonly size?: number;
  readonly extraArgs?: readonly string[];
}

/** Starts a fresh cluster on free loopback ports, every member healthy and a leader elected. */
export async function startEtcdCluster(opts: EtcdClusterOptions = {}): Promise<EtcdCluster> {
  const size = opts.size ?? 3;
  for (let attempt = 1; ; attempt++) {
    const root = mkdtempSync(join(tmpdir(), "edge-etcd-cluster-"));
    const proxies: TcpProxy[] = [];
    const members: EtcdMember[] = [];
    try {
      return await launch(root, size, opts.extraArgs ?? [], proxies, members);
    } catch (e) {
      const inUse = members.some((m) => m.logs.includes("address already in use"));
      await Promise.all(members.map((m) => m.kill()));
      await Promise.all(proxies.map((p) => p.close()));
      rmSync(root, { recursive: true, force: true });
      // A port found free can be taken before etcd binds it: then new ports are tried.
      if (!inUse || attempt >= 3) throw e;
    }
  }
}

async function launch(
  root: string,
  size: number,
  extraArgs: readonly string[],
  proxies: TcpProxy[],
  members: EtcdMember[],
): Promise<EtcdCluster> {
  const ports = await freePorts(size * 2);
  const names = Array.from({ length: size }, (_, i) => `m${i}`);
  const peerPorts = names.map((_, i) => ports[size + i] as number);
  for (const p of peerPorts) proxies.push(await startTcpProxy(p, { inspectHeads: true }));
  const peerUrl = (i: number) => `http://127.0.0.1:${proxies[i]?.port}`;
  const initialCluster = names.map((n, i) => `${n}=${peerUrl(i)}`).join(",");
  let token = `edge-test-${process.pid}-${Date.now()}`;
  let generation = 0;
  const dataDirOf = (i: number) => join(root, `${names[i]}-g${generation}`);
  for (let i = 0; i < size; i++) {
    const client = ports[i] as number;
    members.push(
      etcdMember({
        name: names[i] as string,
        clientPort: client,
        dataDir: dataDirOf(i),
        args: (dataDir) => [
          ...["--name", names[i] as string, "--data-dir", dataDir],
          ...["--listen-client-urls", `http://127.0.0.1:${client}`],
          ...["--advertise-client-urls", `http://127.0.0.1:${client}`],
          ...["--listen-peer-urls", `http://127.0.0.1:${peerPorts[i]}`],
          ...["--initial-advertise-peer-urls", peerUrl(i)],
          ...["--initial-cluster", initialCluster, "--initial-cluster-token", token],
          ...["--initial-cluster-state", "new", "--pre-vote=true"],
          ...["--heartbeat-interval", String(clusterTiming.heartbeatMs)],
          ...["--election-timeout", String(clusterTiming.electionMs)],
          ...["--log-level", "error", "--logger", "zap", ...extraArgs],
        ],
      }),
    );
  }
  await Promise.all(members.map((m) => m.start("healthy")));
  const memberIds: string[] = [];
  for (const m of members) {
    const s = await m.status();
    if (!s) throw new Error(`etcd member ${m.name} gave no status`);
    memberIds.push(s.memberId);
  }
  const member = (i: number): EtcdMember => {
    const m = members[i];
    if (!m) throw new Error(`no etcd member ${i} (cluster of ${size})`);
    return m;
  };
  const partitions = peerPartitions(proxies, memberIds);
  const runningEndpoints = () => members.filter((m) => m.running).map((m) => m.endpoint);
  const ctl = async (args: readonly string[], i?: number) => {
    const endpoints = i === undefined ? runningEndpoints() : [member(i).endpoint];
    const { stdout } = await run("etcdctl", ["--endpoints", endpoints.join(","), ...args], {
      encoding: "utf8",
    });
    return stdout;
  };
  const leaderIndex = async () => {
    const statuses = await Promise.all(members.map((m) => m.status()));
    let best: MemberStatus | undefined;
    for (const s of statuses) {
      if (s?.leaderId && (!best || s.raftTerm > best.raftTerm)) best = s;
    }
    const i = best?.leaderId === undefined ? -1 : memberIds.indexOf(best.leaderId);
    return i < 0 ? undefined : i;
  };
  const cluster: EtcdCluster = {
    size,
    endpoints: members.map((m) => m.endpoint),
    names,
    memberIds,
    peerProxies: proxies,
    members,
    runningEndpoints,
    status: (i) => member(i).status(),
    kill: (i, signal) => member(i).kill(signal),
    restart: (i, o = {}) => member(i).start(o.wait ?? "healthy", o.timeoutMs),
    leaderIndex,
    async waitLeader(o = {}) {
      const deadline = Date.now() + (o.timeoutMs ?? 15_000);
      while (Date.now() < deadline) {
        const i = await leaderIndex();
        if (i !== undefined && i !== o.not) {
          const own = await member(i).status();
          if (own?.leaderId === memberIds[i]) return i;
        }
        await sleep(50);
      }
      throw new Error(
        `no etcd leader${o.not === undefined ? "" : ` other than m${o.not}`} elected in time`,
      );
    },
    partition: (i) => partitions.partition(i),
    heal: (i) => partitions.heal(i),
    ctl,
    async snapshotSave(path) {
      const leader = await leaderIndex();
      const from =
        leader !== undefined && member(leader).running
          ? leader
          : members.findIndex((m) => m.running);
      await ctl(["snapshot", "save", path], from);
    },
    async restoreFromSnapshot(path, o = {}) {
      await Promise.all(members.map((m) => m.kill()));
      partitions.healAll();
      const old = members.map((m) => m.dataDir);
      generation++;
      if (o.newToken) token = `${token}-r${generation}`;
      for (let i = 0; i < size; i++) {
        const m = member(i);
        m.dataDir = dataDirOf(i);
        await run(await snapshotTool(), [
          ...["snapshot", "restore", path, "--name", m.name, "--data-dir", m.dataDir],
          ...["--initial-cluster", initialCluster, "--initial-cluster-token", token],
          ...["--initial-advertise-peer-urls", peerUrl(i)],
        ]);
      }
      for (const d of old) rmSync(d, { recursive: true, force: true });
      await Promise.all(members.map((m) => m.start("healthy")));
      // A new token gives new member ids.
      for (let i = 0; i < size; i++) memberIds[i] = (await member(i).status())?.memberId ?? "";
    },
    async stop() {
      await Promise.all(members.map((m) => m.kill()));
      await Promise.all(proxies.map((p) => p.close()));
      rmSync(root, { recursive: true, force: true });
    },
  };
  return cluster;
}
