import { mkdirSync } from "node:fs";
import type { StackConfig } from "./config.js";
import type { Managed, Supervisor } from "./supervisor.js";
import { probe, waitFor } from "./wait.js";

/** Whether an etcd answers healthy on the endpoint. */
export async function etcdHealthy(endpoint: string): Promise<boolean> {
  const res = await probe(`${endpoint}/health`, {}, 1_500);
  if (!res?.ok) return false;
  const body = (await res.json().catch(() => ({}))) as { health?: unknown };
  return body.health === "true" || body.health === true;
}

// etcd reads every ETCD_* variable as a flag; the client settings (ETCD_ENDPOINTS…) are not its own.
function withoutEtcdVars(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith("ETCD_")));
}

/** The stack's etcd: either one it started, or one that was already running (never stopped). */
export interface StackEtcd {
  readonly endpoint: string;
  readonly reused: boolean;
  readonly managed?: Managed;
}

/**
 * Reuses an etcd that already answers on the client port, else starts one with its data under
 * `.data/etcd` and waits until it reports healthy.
 */
export async function ensureEtcd(
  cfg: StackConfig,
  sup: Supervisor,
  signal: AbortSignal,
): Promise<StackEtcd> {
  const endpoint = `http://127.0.0.1:${cfg.etcdPort}`;
  if (await etcdHealthy(endpoint)) return { endpoint, reused: true };
  mkdirSync(cfg.etcdDataDir, { recursive: true, mode: 0o700 });
  const peer = `http://127.0.0.1:${cfg.etcdPeerPort}`;
  const managed = sup.spawn({
    name: "etcd",
    command: process.env.ETCD_BIN ?? "etcd",
    args: [
      "--name",
      "edge-local",
      "--data-dir",
      cfg.etcdDataDir,
      "--listen-client-urls",
      endpoint,
      "--advertise-client-urls",
      endpoint,
      "--listen-peer-urls",
      peer,
      "--initial-advertise-peer-urls",
      peer,
      "--initial-cluster",
      `edge-local=${peer}`,
      "--logger",
      "zap",
      "--log-level",
      "error",
    ],
    env: withoutEtcdVars(process.env),
    cwd: cfg.root,
  });
  await waitFor(async () => ((await etcdHealthy(endpoint)) ? true : undefined), {
    what: "etcd",
    timeoutMs: 30_000,
    signal,
  });
  return { endpoint, reused: false, managed };
}
