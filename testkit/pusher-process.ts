import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { setTimeout as sleep } from "node:timers/promises";
import { type OwnedProcess, spawnOwned } from "./owned-process.js";
import { freePort } from "./ports.js";

/** Repository root. */
export const ROOT = resolve(import.meta.dirname, "..");

/** One KV write as the pusher logs it (one JSON line per push, docs/reference.md §5, item 7). */
export interface PushEvent {
  /** Wall-clock ms when the write started (log time minus its duration). */
  readonly startedAt: number;
  /** Wall-clock ms when the write had finished (the log line's time). */
  readonly doneAt: number;
  readonly revision: number;
  readonly keys: readonly string[];
  readonly bytes: number;
}

/** The `/status` fields tests read. */
export interface PusherStatusDoc {
  readonly role: "leader" | "standby";
  readonly pusher: string;
  readonly etcd_revision: number | null;
  readonly pushed_revision: number | null;
  readonly routes_revision: number | null;
  readonly problems: readonly string[];
  readonly kv_ok: boolean;
  readonly lag_seconds: number;
}

/** A running `bin/edge-pusher.js` (the built bundle in dist/, as the package ships it). */
export interface PusherProcess {
  readonly id: string;
  readonly pid: number;
  readonly port: number;
  readonly proc: OwnedProcess;
  /** Every push logged so far. */
  readonly pushes: readonly PushEvent[];
  /** The `msg` of every warning or error line logged so far, with its wall-clock ms. */
  readonly warnings: ReadonlyArray<{ readonly at: number; readonly msg: string }>;
  /** Pushes that wrote `routes`, optionally only those started at or after `since` (ms). */
  routesWrites(since?: number): PushEvent[];
  /** Waits until a push with `revision >= rev` that wrote `routes` has been logged. */
  waitForRoutes(rev: number, timeoutMs: number): Promise<PushEvent | null>;
  /** `/status`, or null when it does not answer 200. */
  status(): Promise<PusherStatusDoc | null>;
  /** `/healthz` status code, or 0 when it does not answer. */
  healthz(): Promise<number>;
  /** The status code of `path` (`/livez`, `/readyz`…), or 0 when it does not answer. */
  code(path: string): Promise<number>;
  /** `/metrics` text, or null when it does not answer. */
  metrics(): Promise<string | null>;
  /** Every unlabelled sample of `/metrics` by name (`edge_pusher_compile_seconds_sum`…). */
  metricSamples(): Promise<ReadonlyMap<string, number>>;
  /** Waits until `/status` answers; throws with its output when it exits or times out. */
  ready(timeoutMs?: number): Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`. */
  stop(graceMs?: number): Promise<void>;
}

/** What the pusher is pointed at; everything else goes in `env`. */
export interface PusherProcessOptions {
  /** `PUSHER_ID`; default `<hostname>-<pid>` (the pusher's own). */
  readonly id?: string;
  readonly etcdEndpoint: string;
  readonly prefix: string;
  readonly electionKey: string;
  /** `PUSHER_ELECTION_TTL`; default 10. */
  readonly electionTtl?: number;
  /** `PUSHER_LISTEN`'s port on 127.0.0.1; default a free one. */
  readonly port?: number;
  /** More variables (the KV sink's, timings); they win over the ones above. */
  readonly env?: Readonly<Record<string, string>>;
  /** Node flags before the entry point. */
  readonly nodeArgs?: readonly string[];
  /** Another entry point than bin/edge-pusher.js. */
  readonly entry?: string;
  /** Called with every chunk the pusher writes. */
  readonly onOutput?: (text: string) => void;
  /** Called with every answer of its HTTP listener (path, body). */
  readonly onResponse?: (path: string, body: string) => void;
  /** How many characters of output `proc.output()` keeps; default all. */
  readonly outputLimit?: number;
}

interface PushLogLine {
  msg?: string;
  level?: number;
  time?: string | number;
  duration_ms?: number;
  revision?: number;
  keys?: string[];
  bytes?: number;
}

/** Starts the real pusher as a child process; call `ready()` to wait for its listener. */
export async function startPusherProcess(o: PusherProcessOptions): Promise<PusherProcess> {
  const entry = o.entry ?? join(ROOT, "bin/edge-pusher.js");
  if (!o.entry && !existsSync(join(ROOT, "dist/edge-pusher.js"))) {
    throw new Error("dist/edge-pusher.js is missing: run `npm run build`");
  }
  const port = o.port ?? (await freePort());
  const id = o.id ?? "";
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    ...(process.env.TMPDIR ? { TMPDIR: process.env.TMPDIR } : {}),
    ETCD_ENDPOINTS: o.etcdEndpoint,
    ROUTING_PREFIX: o.prefix,
    PUSHER_ELECTION_KEY: o.electionKey,
    PUSHER_ELECTION_TTL: String(o.electionTtl ?? 10),
    PUSHER_LISTEN: `127.0.0.1:${port}`,
    LOG_LEVEL: "info",
    ...(id ? { PUSHER_ID: id } : {}),
    ...o.env,
  };
  const name = `pusher ${id}`.trim();
  const proc = spawnOwned(name, process.execPath, [...(o.nodeArgs ?? []), entry], {
    env,
    cwd: ROOT,
    ...(o.onOutput ? { onOutput: o.onOutput } : {}),
    ...(o.outputLimit !== undefined ? { outputLimit: o.outputLimit } : {}),
  });
  if (proc.pid <= 0) throw new Error(`could not start the pusher: ${proc.output()}`);

  const pushes: PushEvent[] = [];
  const warnings: Array<{ at: number; msg: string }> = [];
  const waiters = new Set<() => void>();
  createInterface({ input: proc.child.stdout! }).on("line", (line) => {
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

  const base = `http://127.0.0.1:${port}`;
  const get = async (path: string): Promise<{ code: number; body: string } | null> => {
    try {
      const res = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(3_000) });
      const body = await res.text();
      o.onResponse?.(path, body);
      return { code: res.status, body };
    } catch {
      return null;
    }
  };
  const pusher: PusherProcess = {
    id: id || name,
    pid: proc.pid,
    port,
    proc,
    pushes,
    warnings,
    routesWrites: (since = Number.NEGATIVE_INFINITY) =>
      pushes.filter((p) => p.keys.includes("routes") && p.startedAt >= since),
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
    async status() {
      const r = await get("/status");
      if (r?.code !== 200) return null;
      return JSON.parse(r.body) as PusherStatusDoc;
    },
    async healthz() {
      return (await get("/healthz"))?.code ?? 0;
    },
    async code(path) {
      return (await get(path))?.code ?? 0;
    },
    async metrics() {
      return (await get("/metrics"))?.body ?? null;
    },
    async metricSamples() {
      const out = new Map<string, number>();
      const text = (await get("/metrics"))?.body ?? "";
      for (const m of text.matchAll(/^([a-z_]+)\s+(\S+)$/gm)) out.set(m[1] ?? "", Number(m[2]));
      return out;
    },
    async ready(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (!proc.alive()) {
          throw new Error(`${name} exited early:\n${proc.output().slice(-2000)}`);
        }
        if (await pusher.status()) return;
        await sleep(100);
      }
      throw new Error(`${name} did not answer /status:\n${proc.output().slice(-2000)}`);
    },
    stop: (graceMs) => proc.stop(graceMs),
  };
  return pusher;
}
