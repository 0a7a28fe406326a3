import { execFile, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PassThrough } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { stringify } from "yaml";
import { localPersistRoot } from "../../adapters/kv/kv-settings.js";
import { type DemoOrigin, startDemoOrigin } from "../../scripts/stack/demo-origin-server.js";
import { PrefixedOutput } from "../../scripts/stack/output.js";
import { type Managed, Supervisor } from "../../scripts/stack/supervisor.js";
import type { EtcdServer } from "../../testkit/etcd.js";
import { newMiniflare } from "../../testkit/miniflare.js";
import { freePort, freePorts } from "../../testkit/ports.js";
import { singleEtcd } from "../../testkit/system/etcd-side.js";
import { localKv } from "../../testkit/system/kv-side.js";
import { startSystem } from "../../testkit/system.js";
import { bundleWorker, compatibilityDate } from "../../testkit/worker.js";

const ROOT = resolve(import.meta.dirname, "../..");
/** The ROUTING namespace id in wrangler.toml, which the pusher's local sink defaults to. */
const NAMESPACE_ID = "00000000000000000000000000000000";
export const DEBUG_TOKEN = "e2e-debug-token-0123456789abcdef";
export const POOLS = ["fra-1", "ams-1", "par-1"] as const;
export type Pool = (typeof POOLS)[number];

/** What one request through the edge returned. */
export interface EdgeReply {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
}

/** Exit status and output of a one-shot `edgectl` run. */
export interface CtlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * The whole chain for end-to-end tests: a real etcd, demo origins on free ports, one
 * `edgectl heartbeat` child per pool, the real pusher child with the local KV sink in a temp
 * dir, and the bundled Worker in workerd (Miniflare) reading that same persisted namespace.
 */
export interface E2eStack {
  readonly etcd: EtcdServer;
  readonly prefix: string;
  readonly origins: Map<Pool, DemoOrigin>;
  readonly desiredFile: string;
  /** `edgectl ARGS` against this stack's etcd and prefix. */
  edgectl(...args: string[]): Promise<CtlResult>;
  /** Writes a desired-state file with the demo origins and the given country rules. */
  writeDesired(countries: Record<string, { primary: Pool; fallbacks?: Pool[] }>): string;
  /** A GET through the Worker as a visitor from `country` (by `request.cf.country`). */
  request(country: string, path?: string, headers?: Record<string, string>): Promise<EdgeReply>;
  /** The same GET, its response as workerd gave it (a binary body unread). */
  fetch(country: string, path: string, headers?: Record<string, string>): Promise<Response>;
  startHeartbeat(pool: Pool): Managed;
  heartbeat(pool: Pool): Managed | undefined;
  startPusher(): Managed;
  readonly pusher: Managed | undefined;
  /** Everything the children printed so far (for failure messages). */
  logs(): string;
  stop(): Promise<void>;
}

/** Options for {@link startE2eStack}. */
export interface E2eOptions {
  readonly heartbeatTtl?: number;
  readonly countries?: Record<string, { primary: Pool; fallbacks?: Pool[] }>;
}

/** Starts the stack; the caller must `stop()` it. */
export async function startE2eStack(opts: E2eOptions = {}): Promise<E2eStack> {
  const dir = mkdtempSync(join(tmpdir(), "edge-e2e-"));
  const persistDir = join(dir, "state");
  const prefix = `/e2e/${Math.random().toString(36).slice(2, 8)}/`;
  const logLines: string[] = [];
  const sink = new PassThrough();
  sink.on("data", (d: Buffer) => {
    logLines.push(d.toString());
    if (logLines.length > 2_000) logLines.splice(0, 500);
  });
  const sup = new Supervisor(new PrefixedOutput(sink, false), () => {});
  const stopAll = async () => {
    await sup.stopAll(3_000);
    rmSync(dir, { recursive: true, force: true });
  };
  let etcdEndpoint = "";
  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    ...process.env,
    ETCD_ENDPOINTS: etcdEndpoint,
    ROUTING_PREFIX: prefix,
    FLOOR_POOL: "par-1",
    CLOUDFLARE_CF_FETCH_ENABLED: "false",
    ...extra,
  });
  const ttl = opts.heartbeatTtl ?? 2;
  const origins = new Map<Pool, DemoOrigin>();
  const heartbeats = new Map<Pool, Managed>();
  let pusher: Managed | undefined;
  let pusherEnv: Record<string, string> = {};
  const pusherPort = await freePort();

  const writeDesired: E2eStack["writeDesired"] = (countries) => {
    const pools = Object.fromEntries(POOLS.map((p) => [p, { origin: origins.get(p)?.url }]));
    const rules = Object.fromEntries(
      Object.entries(countries).map(([cc, r]) => [
        cc,
        { primary: r.primary, fallbacks: r.fallbacks ?? [] },
      ]),
    );
    const file = join(dir, `desired-${Date.now()}-${Math.random().toString(36).slice(2, 6)}.yaml`);
    writeFileSync(file, stringify({ pools, countries: rules }));
    return file;
  };
  const edgectl = (...args: string[]) =>
    new Promise<CtlResult>((done) => {
      execFile(
        process.execPath,
        [join(ROOT, "bin/edgectl.js"), ...args],
        { cwd: ROOT, env: env({ KV_LOCAL_PERSIST: persistDir }), timeout: 60_000 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === "number" ? err.code : 99) : 0;
          done({ code, stdout, stderr });
        },
      );
    });
  const startHeartbeat = (pool: Pool): Managed => {
    const m = sup.spawn({
      name: `heartbeat ${pool}`,
      command: process.execPath,
      args: [
        join(ROOT, "bin/edgectl.js"),
        "heartbeat",
        pool,
        "--ttl",
        String(ttl),
        "--interval",
        "0.5",
      ],
      env: env(),
      cwd: ROOT,
    });
    heartbeats.set(pool, m);
    return m;
  };
  const startPusher = (): Managed => {
    pusher = sup.spawn({
      name: "pusher",
      command: process.execPath,
      args: [join(ROOT, "bin/edge-pusher.js")],
      env: env({
        ...pusherEnv,
        PUSHER_LISTEN: `127.0.0.1:${pusherPort}`,
        HEARTBEAT_SECONDS: "5",
      }),
      cwd: ROOT,
    });
    return pusher;
  };

  try {
    const system = await startSystem(sup, {
      prefix,
      etcd: singleEtcd(),
      async origins(s) {
        for (const pool of POOLS) {
          const o = await startDemoOrigin({ pool, port: 0 });
          origins.set(pool, o);
          s.owner.add(`origin ${pool}`, () => o.close());
        }
        return origins;
      },
      async seed(s) {
        etcdEndpoint = s.etcd.endpoint;
        const desiredFile = writeDesired(
          opts.countries ?? {
            _default: { primary: "ams-1", fallbacks: ["par-1"] },
            DE: { primary: "fra-1", fallbacks: ["ams-1", "par-1"] },
          },
        );
        const applied = await edgectl("apply", desiredFile, "--yes");
        if (applied.code !== 0) {
          throw new Error(
            `edgectl apply failed (${applied.code}):\n${applied.stdout}${applied.stderr}`,
          );
        }
        return desiredFile;
      },
      kv: localKv({ persistDir }),
      async pushers(s) {
        pusherEnv = s.pusherEnv();
        startPusher();
        // The pusher listens once its KV sink is open; a second workerd creating the same
        // persisted database at the same moment can fail with SQLITE_BUSY.
        await eventually(
          () =>
            fetch(`http://127.0.0.1:${pusherPort}/healthz`, { signal: AbortSignal.timeout(1_000) })
              .then(() => true)
              .catch(() => undefined),
          "pusher listening",
          60_000,
        );
      },
      async worker(s) {
        const [script, date] = await Promise.all([bundleWorker(), compatibilityDate()]);
        const mf = newMiniflare({
          modules: true,
          script,
          compatibilityDate: date,
          // The same persistence root and namespace id as the pusher's local sink (and wrangler dev).
          resourcePersistencePath: localPersistRoot(s.kv.persistDir),
          kvNamespaces: { ROUTING: NAMESPACE_ID },
          bindings: {
            DEBUG_TOKEN,
            ISOLATE_CACHE_SECONDS: "1",
            FLOOR_POOL: "par-1",
            ORIGIN_TEMPLATE: origins.get("par-1")?.url ?? "http://127.0.0.1:9",
            MAX_ATTEMPTS: "2",
          },
          cf: false,
        });
        s.owner.add("worker", () => mf.dispose());
        await mf.ready;
        return mf;
      },
      async heartbeats() {
        for (const pool of POOLS) startHeartbeat(pool);
      },
    });
    const mf = system.worker;
    const fetchAs = (country: string, path: string, sent: Record<string, string> = {}) =>
      mf.dispatchFetch(`http://edge.test${path}`, {
        cf: { country } as never,
        headers: sent,
        redirect: "manual",
      }) as unknown as Promise<Response>;
    const request = async (
      country: string,
      path = "/",
      sent: Record<string, string> = {},
    ): Promise<EdgeReply> => {
      const res = await fetchAs(country, path, sent);
      const body = await res.text();
      const headers = new Headers();
      res.headers.forEach((v, k) => {
        headers.append(k, v);
      });
      return { status: res.status, headers, body };
    };

    return {
      etcd: system.etcd.server,
      prefix,
      origins,
      desiredFile: system.seed,
      edgectl,
      writeDesired,
      request,
      fetch: fetchAs,
      startHeartbeat,
      heartbeat: (pool) => heartbeats.get(pool),
      startPusher,
      get pusher() {
        return pusher;
      },
      logs: () => logLines.join(""),
      stop: stopAll,
    };
  } catch (e) {
    await stopAll();
    throw e;
  }
}

/** Polls `fn` until it returns a value other than `undefined` (bounded; for eventual effects). */
export async function eventually<T>(
  fn: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ""}`,
      );
    }
    await sleep(150);
  }
}

/** `scripts/start-stack.ts` running as a child (`node --import tsx`, as `npm start` but without the tsx CLI). */
export interface StackScript {
  readonly pid: number;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output(): string;
  /** Resolves when the output contains `text`; rejects if the script exits first. */
  waitForOutput(text: string, timeoutMs: number): Promise<void>;
  /** Every live process below the script (pids and command lines). */
  descendants(): { pid: number; cmd: string }[];
  /**
   * Test cleanup: SIGTERM the stack (it stops its children), then SIGKILL the process groups of
   * anything below it that is still alive. A no-op once the script has exited cleanly.
   */
  kill(): Promise<void>;
}

function processTable(): { pid: number; ppid: number; cmd: string }[] {
  const rows: { pid: number; ppid: number; cmd: string }[] = [];
  for (const line of execFileSync("ps", ["-eo", "pid=,ppid=,args="], { encoding: "utf8" }).split(
    "\n",
  )) {
    const m = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(line);
    if (m) rows.push({ pid: Number(m[1]), ppid: Number(m[2]), cmd: m[3] ?? "" });
  }
  return rows;
}

/** Whether a pid still names a live (non-zombie) process. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

/** Runs `scripts/start-stack.ts` with the given environment overrides. */
export function runStackScript(env: NodeJS.ProcessEnv): StackScript {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/start-stack.ts"], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const chunks: string[] = [];
  child.stdout?.on("data", (d: Buffer) => chunks.push(d.toString()));
  child.stderr?.on("data", (d: Buffer) => chunks.push(d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((done) =>
    child.once("exit", (code, signal) => done({ code, signal })),
  );
  const output = () => chunks.join("");
  return {
    pid: child.pid ?? -1,
    exited,
    output,
    async waitForOutput(text, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      let done = false;
      void exited.then(() => {
        done = true;
      });
      while (!output().includes(text)) {
        if (done) throw new Error(`start-stack exited before "${text}":\n${output().slice(-4000)}`);
        if (Date.now() > deadline)
          throw new Error(`no "${text}" within ${timeoutMs} ms:\n${output().slice(-4000)}`);
        await sleep(200);
      }
    },
    async kill() {
      const below = this.descendants();
      if (alive(child.pid ?? -1)) {
        const stack = below.find((p) => p.cmd.includes("stack/main.ts"));
        if (stack) process.kill(stack.pid, "SIGTERM");
        await Promise.race([exited, sleep(20_000)]);
      }
      for (const p of below) {
        if (!alive(p.pid)) continue;
        for (const target of [-p.pid, p.pid]) {
          try {
            process.kill(target, "SIGKILL");
          } catch {
            // not a group leader, or gone
          }
        }
      }
      if (alive(child.pid ?? -1)) child.kill("SIGKILL");
    },
    descendants() {
      const table = processTable();
      const out: { pid: number; cmd: string }[] = [];
      const walk = (pid: number) => {
        for (const row of table) {
          if (row.ppid === pid) {
            out.push({ pid: row.pid, cmd: row.cmd });
            walk(row.pid);
          }
        }
      };
      if (child.pid) walk(child.pid);
      return out;
    },
  };
}

/** Free ports and a temp directory for one `start-stack.ts` run, as EDGE_STACK_* variables. */
export async function stackScriptEnv(
  dir: string,
  seedCountries: Record<string, { primary: Pool; fallbacks?: Pool[] }>,
): Promise<{
  env: NodeJS.ProcessEnv;
  ports: Record<Pool, number> & { worker: number; etcd: number };
}> {
  const [etcd, worker, fra, ams, par, peer, pusher, inspector, observer] = (await freePorts(9)) as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ports = { etcd, worker, "fra-1": fra, "ams-1": ams, "par-1": par };
  const seed = join(dir, "seed.yaml");
  writeFileSync(
    seed,
    stringify({
      pools: Object.fromEntries(POOLS.map((p) => [p, { origin: `http://127.0.0.1:${ports[p]}` }])),
      countries: Object.fromEntries(
        Object.entries(seedCountries).map(([cc, r]) => [
          cc,
          { primary: r.primary, fallbacks: r.fallbacks ?? [] },
        ]),
      ),
    }),
  );
  return {
    ports,
    env: {
      EDGE_STACK_ETCD_PORT: String(ports.etcd),
      EDGE_STACK_ETCD_PEER_PORT: String(peer),
      EDGE_STACK_WORKER_PORT: String(ports.worker),
      EDGE_STACK_PUSHER_PORT: String(pusher),
      EDGE_STACK_INSPECTOR_PORT: String(inspector),
      EDGE_STACK_OBSERVER_PORT: String(observer),
      EDGE_STACK_DATA_DIR: join(dir, "data"),
      EDGE_STACK_PERSIST_DIR: join(dir, "state"),
      EDGE_STACK_SEED: seed,
      EDGE_STACK_DEBUG_TOKEN: DEBUG_TOKEN,
      EDGE_STACK_HEARTBEAT_TTL: "3",
      EDGE_STACK_HEARTBEAT_INTERVAL: "1",
    },
  };
}

/** One GET through a running stack's Worker with the debug token and a debug country. */
export async function edgeGet(workerPort: number, country: string): Promise<Response> {
  return fetch(`http://127.0.0.1:${workerPort}/`, {
    headers: { "X-Edge-Debug-Token": DEBUG_TOKEN, "X-Edge-Debug-Country": country },
    signal: AbortSignal.timeout(10_000),
  });
}
