import { ConfigError } from "../adapters/errors.js";
import { type EtcdSettings, etcdSettingsFromEnv } from "../adapters/etcd-options.js";
import { type RoutingSettings, routingSettingsFromEnv } from "../adapters/routing-settings.js";

/** Settings shared by every command, from the environment and the global flags. */
export interface CliSettings extends RoutingSettings {
  readonly etcd: EtcdSettings;
  /** TTL of the `lock/apply` lease in seconds (`EDGECTL_LOCK_TTL`, default 30). */
  readonly lockTtlSeconds: number;
  /** Most operations etcd accepts in one transaction (`EDGECTL_MAX_TXN_OPS`, etcd's default 128). */
  readonly maxTxnOps: number;
  /** Deadline of one etcd request in ms (`EDGECTL_ETCD_TIMEOUT_MS`, default 5000). */
  readonly etcdTimeoutMs: number;
}

function positiveInt(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  fallback: number,
): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^[1-9][0-9]{0,8}$/.test(raw.trim())) {
    throw new ConfigError("invalid-setting", name, `"${raw}" is not a positive integer`);
  }
  return Number(raw.trim());
}

/** Reads the CLI settings; `prefix` (from `--prefix`) wins over `ROUTING_PREFIX`. */
export function cliSettingsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  flags: { readonly prefix?: string | undefined } = {},
): CliSettings {
  return {
    ...routingSettingsFromEnv(env, flags.prefix),
    etcd: etcdSettingsFromEnv(env),
    lockTtlSeconds: positiveInt(env, "EDGECTL_LOCK_TTL", 30),
    maxTxnOps: positiveInt(env, "EDGECTL_MAX_TXN_OPS", 128),
    etcdTimeoutMs: positiveInt(env, "EDGECTL_ETCD_TIMEOUT_MS", 5000),
  };
}
