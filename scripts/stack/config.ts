import { randomBytes } from "node:crypto";
import { resolve } from "node:path";

/** Everything the local stack needs to know; built from the environment by the entry point. */
export interface StackConfig {
  readonly root: string;
  readonly etcdPort: number;
  readonly etcdPeerPort: number;
  readonly etcdDataDir: string;
  readonly workerPort: number;
  readonly pusherPort: number;
  /** `wrangler dev --persist-to` and the pusher's `KV_LOCAL_PERSIST`. */
  readonly persistDir: string;
  /** The desired-state file applied when the prefix is empty; it also lists the demo origins. */
  readonly seedFile: string;
  readonly prefix: string;
  readonly heartbeatTtl: number;
  readonly heartbeatInterval: number;
  readonly readyTimeoutMs: number;
  readonly debugToken: string;
  /** The Worker's `OBSERVE_TOKEN`, random per run, which `edgectl observe` polls with. */
  readonly observeToken: string;
  /** Where `edgectl observe` serves `/metrics` and `/status`. */
  readonly observerPort: number;
  /** Where the Worker's secrets go for `wrangler dev --env-file` (mode 0600, never argv). */
  readonly workerEnvFile: string;
  /** Wrangler's devtools port; 0 lets the stack pick a free one. */
  readonly inspectorPort: number;
  readonly colour: boolean;
}

function int(env: Readonly<Record<string, string | undefined>>, name: string, def: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return def;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) {
    throw new Error(`${name}: "${raw}" is not a port/number`);
  }
  return n;
}

/**
 * Reads `EDGE_STACK_*` overrides (ports, directories, seed file) so tests can run a second
 * stack beside a developer's `npm start`.
 */
export function stackConfigFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  opts: { root: string; isTty: boolean },
): StackConfig {
  const dataDir = resolve(opts.root, env.EDGE_STACK_DATA_DIR ?? ".data");
  const token = env.EDGE_STACK_DEBUG_TOKEN ?? randomBytes(16).toString("hex");
  if (!/^[A-Za-z0-9_-]{16,}$/.test(token)) {
    throw new Error("EDGE_STACK_DEBUG_TOKEN: use at least 16 letters, digits, '-' or '_'");
  }
  return {
    root: opts.root,
    etcdPort: int(env, "EDGE_STACK_ETCD_PORT", 2379),
    etcdPeerPort: int(env, "EDGE_STACK_ETCD_PEER_PORT", 2380),
    etcdDataDir: resolve(dataDir, "etcd"),
    workerPort: int(env, "EDGE_STACK_WORKER_PORT", 8787),
    pusherPort: int(env, "EDGE_STACK_PUSHER_PORT", 9464),
    persistDir: resolve(opts.root, env.EDGE_STACK_PERSIST_DIR ?? ".wrangler/state"),
    seedFile: resolve(opts.root, env.EDGE_STACK_SEED ?? "examples/local.yaml"),
    prefix: env.ROUTING_PREFIX ?? "/edge/routing/v1/",
    heartbeatTtl: int(env, "EDGE_STACK_HEARTBEAT_TTL", 10),
    heartbeatInterval: int(env, "EDGE_STACK_HEARTBEAT_INTERVAL", 2),
    readyTimeoutMs: int(env, "EDGE_STACK_READY_TIMEOUT", 180) * 1000,
    debugToken: token,
    observeToken: randomBytes(16).toString("hex"),
    observerPort: int(env, "EDGE_STACK_OBSERVER_PORT", 9466),
    workerEnvFile: resolve(dataDir, "worker.env"),
    inspectorPort: int(env, "EDGE_STACK_INSPECTOR_PORT", 0),
    colour: opts.isTty && !env.NO_COLOR && env.TERM !== "dumb",
  };
}
