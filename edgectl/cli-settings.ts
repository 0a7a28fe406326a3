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
  /**
   * Deadline of one etcd request to one member in ms (`EDGECTL_ETCD_TIMEOUT_MS`, default 5000);
   * also how long a call keeps moving between members before etcd counts as unavailable.
   */
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

/** Command-line flags that win over the environment. */
export interface CliFlags {
  /** `--prefix`, over `ROUTING_PREFIX`. */
  readonly prefix?: string | undefined;
  /** `--endpoints`, over `ETCD_ENDPOINTS`. */
  readonly endpoints?: string | undefined;
}

/** Reads the CLI settings; `--prefix` and `--endpoints` win over their variables. */
export function cliSettingsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  flags: CliFlags = {},
): CliSettings {
  return {
    ...routingSettingsFromEnv(env, flags.prefix),
    etcd: etcdSettingsFromEnv(env, { endpoints: flags.endpoints }),
    lockTtlSeconds: positiveInt(env, "EDGECTL_LOCK_TTL", 30),
    maxTxnOps: positiveInt(env, "EDGECTL_MAX_TXN_OPS", 128),
    etcdTimeoutMs: positiveInt(env, "EDGECTL_ETCD_TIMEOUT_MS", 5000),
  };
}
