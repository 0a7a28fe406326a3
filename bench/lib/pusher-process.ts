import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { Cleanup } from "./cleanup.js";
import { ownChild } from "./owned-child.js";
import { childPids, commName, rssMb } from "./proc.js";
import { sleep } from "./sleep.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** One KV write as the pusher logs it (one JSON line per push, SPEC §5.7). */
export interface PushEvent {
  /** Wall-clock ms when the write started (log time minus its duration). */
  readonly startedAt: number;
  /** Wall-clock ms when the write had finished (the log line's time). */
  readonly doneAt: number;
  readonly revision: number;
  readonly keys: readonly string[];
  readonly bytes: number;
}

/** A running `node bin/edge-pusher.js`: the built bundle in dist/, as the package ships it. */
export interface PusherProcess {
  readonly pid: number;
  readonly port: number;
  /** Every push logged so far. */
  readonly pushes: readonly PushEvent[];
  /** The `msg` of every warning or error line logged so far, with its wall-clock ms. */
  readonly warnings: ReadonlyArray<{ readonly at: number; readonly msg: string }>;
  /** Pushes that wrote `routes`, optionally only those started at or after `since` (ms). */
  routesWrites(since?: number): PushEvent[];
  /** RSS of the pusher's Node process in MiB. */
  rssMb(): number;
  /** RSS of its children (the local sink's workerd) in MiB. */
  childRssMb(): number;
  /** `edge_pusher_pushes_total` from `/metrics`. */
  pushesTotal(): Promise<number>;
  /** Every unlabelled sample of `/metrics` by name (`edge_pusher_compile_seconds_sum`…). */
  metricSamples(): Promise<ReadonlyMap<string, number>>;
  /** Waits until a push with `revision >= rev` that wrote `routes` has been logged. */
  waitForRoutes(rev: number, timeoutMs: number): Promise<PushEvent | null>;
  /** SIGTERM, then SIGKILL after a grace period. */
  stop(): Promise<void>;
}

/** What the pusher is pointed at. */
export interface PusherProcessOptions {
  readonly etcdEndpoint: string;
  readonly prefix: string;
  readonly persistDir: string;
  readonly namespaceId: string;
  readonly electionKey: string;
  readonly port: number;
  readonly cleanup: Cleanup;
  readonly env?: Readonly<Record<string, string>>;
  /** `NODE_OPTIONS` for the pusher (e.g. the systemd unit's heap bounds); default none. */
  readonly nodeOptions?: string | null;
}

function nodeOptions(fallback: string | null | undefined): { NODE_OPTIONS?: string } {
  const v = process.env.BENCH_PUSHER_NODE_OPTIONS ?? fallback;
  return v ? { NODE_OPTIONS: v } : {};
}

interface PushLogLine {
  msg?: string;
  level?: number;
  /** ISO 8601 (the log schema); a number from older pushers. */
  time?: string | number;
  duration_ms?: number;
  revision?: number;
  keys?: string[];
  bytes?: number;
}

/** Starts the pusher as a child process configured by SPEC §5 variables; waits for `/healthz`. */
export async function startPusherProcess(o: PusherProcessOptions): Promise<PusherProcess> {
  // bin/ runs dist/ (`npm run bench` builds it first: prebench). BENCH_PUSHER_ENTRY: another
  // entry point for memory experiments.
  const entry = process.env.BENCH_PUSHER_ENTRY || `${ROOT}bin/edge-pusher.js`;
  if (!process.env.BENCH_PUSHER_ENTRY && !existsSync(`${ROOT}dist/edge-pusher.js`)) {
    throw new Error("dist/edge-pusher.js is missing: run `npm run build` (npm run bench does)");
  }
  // BENCH_PUSHER_NODE_ARGS: node/V8 flags NODE_OPTIONS does not accept (memory experiments).
  const nodeArgs = (process.env.BENCH_PUSHER_NODE_ARGS ?? "").split(" ").filter(Boolean);
  const child: ChildProcess = spawn(process.execPath, [...nodeArgs, entry], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? "",
      HOME: process.env.HOME ?? "/tmp",
      ETCD_ENDPOINTS: o.etcdEndpoint,
      ROUTING_PREFIX: o.prefix,
      KV_SINK: "local",
      KV_LOCAL_PERSIST: o.persistDir,
      KV_NAMESPACE_ID: o.namespaceId,
      PUSHER_LISTEN: `127.0.0.1:${o.port}`,
      PUSHER_ELECTION_KEY: o.electionKey,
      PUSHER_ELECTION_TTL: "5",
      LOG_LEVEL: "info",
      // BENCH_PUSHER_NODE_OPTIONS (even empty) wins, for experiments without editing the bench.
      ...nodeOptions(o.nodeOptions),
      // EDGE_PUSHER_TUNED set (even empty): the pusher runs without bin/pusher-tuning.js's settings.
      ...(process.env.EDGE_PUSHER_TUNED !== undefined ? { EDGE_PUSHER_TUNED: "0" } : {}),
      // BENCH_PUSHER_ENV='{"MALLOC_ARENA_MAX":"2"}': more variables (memory experiments).
      ...(JSON.parse(process.env.BENCH_PUSHER_ENV || "{}") as Record<string, string>),
      ...o.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const pid = child.pid;
  if (pid === undefined) throw new Error("could not start the pusher");
  const pushes: PushEvent[] = [];
  const warnings: Array<{ at: number; msg: string }> = [];
  const waiters = new Set<() => void>();
  createInterface({ input: child.stdout! }).on("line", (line) => {
    let rec: PushLogLine;
    try {
      rec = JSON.parse(line) as PushLogLine;
    } catch {
      return;
    }
    const time = typeof rec.time === "string" ? Date.parse(rec.time) : rec.time;
    if ((rec.level ?? 0) >= 40) warnings.push({ at: time ?? 0, msg: rec.msg ?? "" });
    if ((rec.msg === "push" || rec.msg === "heartbeat") && typeof time === "number" && time > 0) {
      pushes.push({
        startedAt: time - (rec.duration_ms ?? 0),
        doneAt: time,
        revision: rec.revision ?? 0,
        keys: rec.keys ?? [],
        bytes: rec.bytes ?? 0,
      });
      for (const w of waiters) w();
    }
  });
  const { stderr, stop } = ownChild(child, `pusher ${pid}`, o.cleanup, 15_000);

  const base = `http://127.0.0.1:${o.port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`pusher exited with ${child.exitCode}: ${stderr.join("").slice(-1500)}`);
    }
    try {
      const res = await fetch(`${base}/healthz`);
      await res.text();
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`pusher not healthy: ${stderr.join("")}`);
    await sleep(100);
  }

  const routesWrites = (since = Number.NEGATIVE_INFINITY) =>
    pushes.filter((p) => p.keys.includes("routes") && p.startedAt >= since);
  return {
    pid,
    port: o.port,
    pushes,
    warnings,
    routesWrites,
    rssMb: () => rssMb(pid),
    childRssMb: () =>
      childPids(pid)
        .filter((c) => commName(c).startsWith("workerd"))
        .reduce((s, c) => s + (rssMb(c) || 0), 0),
    async pushesTotal() {
      const text = await (await fetch(`${base}/metrics`)).text();
      const m = /^edge_pusher_pushes_total\s+(\d+(?:\.\d+)?)/m.exec(text);
      return m ? Number(m[1]) : Number.NaN;
    },
    async metricSamples() {
      const text = await (await fetch(`${base}/metrics`)).text();
      const out = new Map<string, number>();
      for (const m of text.matchAll(/^([a-z_]+)\s+(\S+)$/gm)) out.set(m[1] ?? "", Number(m[2]));
      return out;
    },
    async waitForRoutes(rev, timeoutMs) {
      const find = () => pushes.find((p) => p.revision >= rev && p.keys.includes("routes"));
      const found = find();
      if (found) return found;
      return new Promise<PushEvent | null>((resolve) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          resolve(null);
        }, timeoutMs);
        const check = () => {
          const p = find();
          if (!p) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(p);
        };
        waiters.add(check);
      });
    },
    stop,
  };
}
