import { mkdirSync } from "node:fs";
import { relative } from "node:path";
import { etcdProductionVerdict } from "../../adapters/etcd-version-floor.js";
import { chooseEtcd } from "../../testkit/etcd-choice.js";
import type { OwnedProcess } from "../../testkit/owned-process.js";
import type { Owner } from "../../testkit/system/owner.js";
import type { StackConfig } from "./config.js";
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
  readonly managed?: OwnedProcess;
  /** The server's own version (`GET /version`), or null when it does not say. */
  readonly version: string | null;
  /** The binary started (`ETCD_BIN`, the newest under `.tools/`, or `etcd` on PATH); null when reused. */
  readonly binary: string | null;
}

/** The version the etcd at `endpoint` reports (`GET /version`'s `etcdserver`), or null. */
export async function etcdServerVersion(endpoint: string): Promise<string | null> {
  const res = await probe(`${endpoint}/version`, {}, 1_500);
  if (!res?.ok) return null;
  const body = (await res.json().catch(() => ({}))) as { etcdserver?: unknown };
  return typeof body.etcdserver === "string" ? body.etcdserver : null;
}

/**
 * One line on the stack's etcd: its version, where it came from, and whether production would
 * accept it (docs/operating.md, "etcd versions"); fine locally either way.
 */
export function describeStackEtcd(etcd: StackEtcd, root: string): string {
  const from = etcd.binary
    ? ` from ${etcd.binary.startsWith(root) ? relative(root, etcd.binary) : etcd.binary}`
    : "";
  if (!etcd.version) return `etcd: version unknown${from}`;
  const verdict = etcdProductionVerdict(etcd.version);
  return verdict.accepted
    ? `etcd ${etcd.version}${from}: production would accept it`
    : `etcd ${etcd.version}${from}: production would not (${verdict.why}); fine for local development`;
}

/**
 * Reuses an etcd that already answers on the client port, else starts one with its data under
 * `.data/etcd` (stopped by `owner`) and waits until it reports healthy.
 */
export async function ensureEtcd(
  cfg: StackConfig,
  owner: Owner,
  signal: AbortSignal,
): Promise<StackEtcd> {
  const endpoint = `http://127.0.0.1:${cfg.etcdPort}`;
  if (await etcdHealthy(endpoint)) {
    return { endpoint, reused: true, version: await etcdServerVersion(endpoint), binary: null };
  }
  // The newest supported etcd the machine has: the matrix's build under .tools/ when present
  // (scripts/etcd-matrix.sh, run by `npm test`'s setup, never on npm start's path), else PATH's.
  const binary = chooseEtcd(process.env.ETCD_BIN, cfg.root).bin;
  mkdirSync(cfg.etcdDataDir, { recursive: true, mode: 0o700 });
  const peer = `http://127.0.0.1:${cfg.etcdPeerPort}`;
  const managed = owner.spawn({
    name: "etcd",
    command: binary,
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
  return { endpoint, reused: false, managed, version: await etcdServerVersion(endpoint), binary };
}
