import { join, resolve } from "node:path";
import { freePort } from "../../helpers/ports.js";
import type { FaultContext } from "../scenario.js";
import { type OwnedProcess, sleep, spawnOwned } from "./processes.js";

/** Repository root. */
export const ROOT = resolve(import.meta.dirname, "../../..");

/** The `/status` fields the suite reads. */
export interface PusherStatusDoc {
  readonly role: "leader" | "standby";
  readonly pusher: string;
  readonly etcd_revision: number | null;
  readonly pushed_revision: number | null;
  readonly problems: readonly string[];
  readonly kv_ok: boolean;
  readonly lag_seconds: number;
}

/** A real `bin/edge-pusher.js` child process. */
export interface PusherProcess {
  readonly id: string;
  readonly port: number;
  readonly proc: OwnedProcess;
  status(): Promise<PusherStatusDoc | null>;
  /** `/healthz` status code, or 0 when it does not answer. */
  healthz(): Promise<number>;
  /** The status code of `path` (`/livez`, `/readyz`…), or 0 when it does not answer. */
  code(path: string): Promise<number>;
  metrics(): Promise<string | null>;
  /** Waits until `/status` answers. */
  ready(timeoutMs?: number): Promise<void>;
}

/** Options for one pusher child. */
export interface PusherProcessOptions {
  readonly id: string;
  readonly etcdEndpoint: string;
  readonly prefix: string;
  readonly electionKey: string;
  readonly electionTtl?: number;
  readonly kvEnv: Record<string, string>;
  readonly extraEnv?: Record<string, string>;
}

/** Starts the real pusher binary; it is stopped (SIGTERM, then SIGKILL) with the scenario. */
export async function startPusherProcess(
  ctx: FaultContext,
  o: PusherProcessOptions,
): Promise<PusherProcess> {
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: process.env.TMPDIR,
    NODE_ENV: "production",
    ETCD_ENDPOINTS: o.etcdEndpoint,
    ROUTING_PREFIX: o.prefix,
    PUSHER_ELECTION_KEY: o.electionKey,
    PUSHER_ELECTION_TTL: String(o.electionTtl ?? 10),
    PUSHER_ID: o.id,
    PUSHER_LISTEN: `127.0.0.1:${port}`,
    HEARTBEAT_SECONDS: "5",
    // Anti-entropy every 10 s, so reconciles meet the stand-in's stale reads in every scenario.
    RESYNC_SECONDS: "10",
    ORIGIN_TEMPLATE: "https://{pool}.origin.example.com",
    FLOOR_POOL: "par-1",
    LOG_LEVEL: "info",
    ...o.kvEnv,
    ...o.extraEnv,
  };
  const proc = spawnOwned(`pusher ${o.id}`, process.execPath, [join(ROOT, "bin/edge-pusher.js")], {
    env,
    cwd: ROOT,
    onOutput: (text) => ctx.transcript.add(`pusher ${o.id}`, "log", text),
  });
  ctx.defer(() => proc.stop());
  const base = `http://127.0.0.1:${port}`;
  const get = async (path: string): Promise<{ code: number; body: string } | null> => {
    try {
      const res = await fetch(`${base}${path}`, { signal: AbortSignal.timeout(3_000) });
      const body = await res.text();
      const kind = path === "/metrics" ? "metrics" : path === "/status" ? "status" : "healthz";
      ctx.transcript.add(`pusher ${o.id} ${path}`, kind, body);
      return { code: res.status, body };
    } catch {
      return null;
    }
  };
  const pusher: PusherProcess = {
    id: o.id,
    port,
    proc,
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
    async ready(timeoutMs = 30_000) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (!proc.alive()) {
          throw new Error(`pusher ${o.id} exited early:\n${proc.output().slice(-2000)}`);
        }
        if (await pusher.status()) return;
        await sleep(100);
      }
      throw new Error(`pusher ${o.id} did not answer /status:\n${proc.output().slice(-2000)}`);
    },
  };
  return pusher;
}
