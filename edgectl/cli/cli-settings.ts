import { hostname, userInfo } from "node:os";
import { ConfigError } from "../../adapters/errors.js";
import { type EtcdSettings, etcdSettingsFromEnv } from "../../adapters/etcd-options.js";
import { type RoutingSettings, routingSettingsFromEnv } from "../../adapters/routing-settings.js";
import { routingPrefixProblem, safeText } from "../../core/index.js";
import { DEFAULT_AUDIT_KEEP, DEFAULT_AUDIT_PREFIX } from "../audit/audit-record.js";
import {
  DEFAULT_ETCD_TIMEOUT_MS,
  DEFAULT_LOCK_TTL_SECONDS,
  DEFAULT_MAX_TXN_OPS,
} from "./edgectl-env.js";

/** Settings shared by every command, from the environment and the global flags. */
export interface CliSettings extends RoutingSettings {
  readonly etcd: EtcdSettings;
  /** TTL of the `lock/apply` lease in seconds (`EDGECTL_LOCK_TTL`). */
  readonly lockTtlSeconds: number;
  /** Most operations etcd accepts in one transaction (`EDGECTL_MAX_TXN_OPS`). */
  readonly maxTxnOps: number;
  /**
   * Deadline of one etcd request to one member in ms (`EDGECTL_ETCD_TIMEOUT_MS`);
   * also how long a call keeps moving between members before etcd counts as unavailable.
   */
  readonly etcdTimeoutMs: number;
  /** Where audit records live (`AUDIT_PREFIX`), outside `prefix`. */
  readonly auditPrefix: string;
  /** Audit records kept: older ones are pruned by the commit (`EDGECTL_AUDIT_KEEP`). */
  readonly auditKeep: number;
  /** Who the audit record names (`EDGECTL_USER`, else the OS user and host: `user@host`). */
  readonly user: string;
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

/** The audit prefix: `/`-delimited and disjoint from the routing prefix (neither contains the other). */
function auditPrefixFrom(
  env: Readonly<Record<string, string | undefined>>,
  routingPrefix: string,
): string {
  const prefix = env.AUDIT_PREFIX?.trim() || DEFAULT_AUDIT_PREFIX;
  const problem = routingPrefixProblem(prefix);
  if (problem) throw new ConfigError("invalid-setting", "AUDIT_PREFIX", problem);
  if (prefix.startsWith(routingPrefix) || routingPrefix.startsWith(prefix)) {
    throw new ConfigError(
      "invalid-setting",
      "AUDIT_PREFIX",
      `"${safeText(prefix, 64)}" overlaps the routing prefix "${safeText(routingPrefix, 64)}": audit records must live outside it`,
    );
  }
  return prefix;
}

/** `EDGECTL_USER`, else `user@host` from the OS (`unknown@host` when the OS has no name for the uid). */
function auditUser(env: Readonly<Record<string, string | undefined>>): string {
  const set = env.EDGECTL_USER?.trim();
  if (set) return set;
  let name = "unknown";
  try {
    name = userInfo().username;
  } catch {
    // a uid without a passwd entry (containers)
  }
  return `${name}@${hostname()}`;
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
  const routing = routingSettingsFromEnv(env, flags.prefix);
  return {
    ...routing,
    etcd: etcdSettingsFromEnv(env, { endpoints: flags.endpoints }),
    lockTtlSeconds: positiveInt(env, "EDGECTL_LOCK_TTL", DEFAULT_LOCK_TTL_SECONDS),
    maxTxnOps: positiveInt(env, "EDGECTL_MAX_TXN_OPS", DEFAULT_MAX_TXN_OPS),
    etcdTimeoutMs: positiveInt(env, "EDGECTL_ETCD_TIMEOUT_MS", DEFAULT_ETCD_TIMEOUT_MS),
    auditPrefix: auditPrefixFrom(env, routing.prefix),
    auditKeep: positiveInt(env, "EDGECTL_AUDIT_KEEP", DEFAULT_AUDIT_KEEP),
    user: auditUser(env),
  };
}
