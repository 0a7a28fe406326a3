import { ConfigError } from "../adapters/errors.js";
import { type EtcdSettings, etcdSettingsFromEnv } from "../adapters/etcd-options.js";
import {
  DEFAULT_FLOOR_POOL,
  DEFAULT_ORIGIN_TEMPLATE,
  DEFAULT_PREFIX,
  isPoolName,
  originTemplateProblem,
  routingPrefixProblem,
} from "../core/index.js";

/** Settings shared by every command, from the environment and the global flags. */
export interface CliSettings {
  readonly prefix: string;
  readonly floorPool: string;
  readonly originTemplate: string;
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
  const prefix = (flags.prefix ?? env.ROUTING_PREFIX)?.trim() || DEFAULT_PREFIX;
  const prefixProblem = routingPrefixProblem(prefix);
  if (prefixProblem) throw new ConfigError("invalid-setting", "ROUTING_PREFIX", prefixProblem);
  const floorPool = env.FLOOR_POOL?.trim() || DEFAULT_FLOOR_POOL;
  if (!isPoolName(floorPool)) {
    throw new ConfigError("invalid-setting", "FLOOR_POOL", `"${floorPool}" is not a pool name`);
  }
  const originTemplate = env.ORIGIN_TEMPLATE?.trim() || DEFAULT_ORIGIN_TEMPLATE;
  const templateProblem = originTemplateProblem(originTemplate);
  if (templateProblem) throw new ConfigError("invalid-setting", "ORIGIN_TEMPLATE", templateProblem);
  return {
    prefix,
    floorPool,
    originTemplate,
    etcd: etcdSettingsFromEnv(env),
    lockTtlSeconds: positiveInt(env, "EDGECTL_LOCK_TTL", 30),
    maxTxnOps: positiveInt(env, "EDGECTL_MAX_TXN_OPS", 128),
    etcdTimeoutMs: positiveInt(env, "EDGECTL_ETCD_TIMEOUT_MS", 5000),
  };
}
