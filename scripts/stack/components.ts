import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { SpawnSpec } from "../../testkit/system/owner.js";
import { deployedMemoryEnvironment } from "../../testkit/unit-environment.js";
import type { StackConfig } from "./config.js";
import type { LocalPool } from "./seed.js";

/** The environment shared by edgectl and the pusher: the stack's etcd and prefix. */
export function etcdEnv(cfg: StackConfig, endpoint: string): NodeJS.ProcessEnv {
  return { ...process.env, ETCD_ENDPOINTS: endpoint, ROUTING_PREFIX: cfg.prefix };
}

/** `edgectl ARGS` against the stack's etcd. */
export function edgectlSpec(
  cfg: StackConfig,
  endpoint: string,
  name: string,
  args: readonly string[],
): SpawnSpec {
  return {
    name,
    command: process.execPath,
    args: [join(cfg.root, "bin/edgectl.js"), ...args],
    env: etcdEnv(cfg, endpoint),
    cwd: cfg.root,
  };
}

/** A demo origin for one local pool. */
export function originSpec(cfg: StackConfig, p: LocalPool): SpawnSpec {
  return {
    name: `origin ${p.pool}`,
    command: process.execPath,
    args: [
      "--import",
      "tsx",
      join(cfg.root, "scripts/demo-origin.ts"),
      "--pool",
      p.pool,
      "--port",
      String(p.port),
    ],
    env: process.env,
    cwd: cfg.root,
  };
}

/**
 * `edgectl heartbeat POOL` with an HTTP check against the pool's demo origin, with its unit's
 * memory settings (deploy/edge-heartbeat@.service).
 */
export function heartbeatSpec(cfg: StackConfig, endpoint: string, p: LocalPool): SpawnSpec {
  const spec = edgectlSpec(cfg, endpoint, `heartbeat ${p.pool}`, [
    "heartbeat",
    p.pool,
    "--ttl",
    String(cfg.heartbeatTtl),
    "--interval",
    String(cfg.heartbeatInterval),
    "--check-url",
    `${p.origin}/healthz`,
  ]);
  const memory = deployedMemoryEnvironment(cfg.root, "edge-heartbeat@.service");
  return { ...spec, env: { ...spec.env, ...memory }, expendable: true };
}

/**
 * `edgectl observe` against the local Worker: what viewers get on `/metrics`, its health on
 * `/status`, `observed/` keys in etcd. The token goes through the environment, never argv.
 */
export function observerSpec(cfg: StackConfig, endpoint: string): SpawnSpec {
  const spec = edgectlSpec(cfg, endpoint, "observer", [
    "observe",
    "--edge",
    `http://127.0.0.1:${cfg.workerPort}`,
    "--interval",
    "5",
    "--min-samples",
    "20",
    "--listen",
    `127.0.0.1:${cfg.observerPort}`,
  ]);
  return { ...spec, env: { ...spec.env, OBSERVE_TOKEN: cfg.observeToken }, expendable: true };
}

/** Routing settings the pusher and the Worker must agree on. */
export interface EdgeSettings {
  readonly floorPool: string;
  readonly originTemplate: string;
}

/**
 * The pusher on the system's etcd and KV sink (`systemEnv`: the local sink persisted where
 * `wrangler dev` reads), with its unit's memory settings (deploy/edge-pusher.service).
 */
export function pusherSpec(
  cfg: StackConfig,
  systemEnv: Readonly<Record<string, string>>,
  edge: EdgeSettings,
): SpawnSpec {
  return {
    name: "pusher",
    // Before the heartbeats: KV keeps the last healthy map instead of an all-drained one.
    stopPriority: 1,
    command: process.execPath,
    args: [join(cfg.root, "bin/edge-pusher.js")],
    env: {
      ...process.env,
      ...systemEnv,
      ...deployedMemoryEnvironment(cfg.root, "edge-pusher.service"),
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
      // The pusher insists on a {pool} placeholder; with every pool (the floor included) defined
      // in the seed, its default template is never used, so leave it out rather than fail.
      ...(edge.originTemplate.includes("{pool}") ? { ORIGIN_TEMPLATE: edge.originTemplate } : {}),
      FLOOR_POOL: edge.floorPool,
      PUSHER_LISTEN: `127.0.0.1:${cfg.pusherPort}`,
    },
    cwd: cfg.root,
  };
}

/**
 * Writes the Worker's secrets where only this user can read them. On the command line the debug
 * token would be visible to every local user through `ps`.
 */
export function writeWorkerSecrets(cfg: StackConfig): void {
  mkdirSync(dirname(cfg.workerEnvFile), { recursive: true, mode: 0o700 });
  writeFileSync(
    cfg.workerEnvFile,
    `DEBUG_TOKEN=${cfg.debugToken}\nOBSERVE_TOKEN=${cfg.observeToken}\n`,
    { mode: 0o600 },
  );
  chmodSync(cfg.workerEnvFile, 0o600);
}

/** The Worker under `wrangler dev`, never prompting; its secrets come from `writeWorkerSecrets`. */
export function workerSpec(cfg: StackConfig, edge: EdgeSettings, inspectorPort: number): SpawnSpec {
  return {
    name: "worker",
    stopPriority: 2,
    command: process.execPath,
    args: [
      join(cfg.root, "node_modules/wrangler/bin/wrangler.js"),
      "dev",
      "--ip",
      "127.0.0.1",
      "--port",
      String(cfg.workerPort),
      "--inspector-ip",
      "127.0.0.1",
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      cfg.persistDir,
      "--show-interactive-dev-session=false",
      "--env-file",
      cfg.workerEnvFile,
      "--var",
      "ISOLATE_CACHE_SECONDS:1",
      "--var",
      `FLOOR_POOL:${edge.floorPool}`,
      "--var",
      `ORIGIN_TEMPLATE:${edge.originTemplate}`,
    ],
    env: {
      ...process.env,
      CI: "1",
      WRANGLER_SEND_METRICS: "false",
      // Offline-friendly: use Miniflare's placeholder `request.cf` (country US) instead of
      // fetching one from workers.cloudflare.com on every start.
      CLOUDFLARE_CF_FETCH_ENABLED: "false",
      WRANGLER_HIDE_BANNER: "true",
      FORCE_COLOR: "0",
    },
    cwd: cfg.root,
  };
}
