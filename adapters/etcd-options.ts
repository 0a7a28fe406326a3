import { readFileSync } from "node:fs";
import type { IOptions } from "etcd3";
import { readCredential } from "./credential.js";
import { ConfigError } from "./errors.js";

/** The etcd connection settings of docs/reference.md §5, as read from the environment. */
export interface EtcdSettings {
  readonly endpoints: readonly string[];
  readonly username?: string;
  readonly password?: string;
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
}

/** Settings given on a command line, which win over the environment. */
export interface EtcdSettingsFlags {
  /** `--endpoints`: comma-separated, like `ETCD_ENDPOINTS`. */
  readonly endpoints?: string | undefined;
}

/** `ETCD_ENDPOINTS`'s default: one local member. */
export const DEFAULT_ETCD_ENDPOINTS = "http://127.0.0.1:2379";

/**
 * Reads `ETCD_*` variables from an environment object (only entry points pass `process.env`);
 * `flags.endpoints` (edgectl's `--endpoints`) overrides `ETCD_ENDPOINTS`.
 */
export function etcdSettingsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  flags: EtcdSettingsFlags = {},
): EtcdSettings {
  // Like etcdctl, a bare host:port is accepted; its scheme follows the TLS settings.
  const scheme = env.ETCD_CA_FILE || env.ETCD_CERT_FILE ? "https://" : "http://";
  const setting = flags.endpoints !== undefined ? "--endpoints" : "ETCD_ENDPOINTS";
  const endpoints = (flags.endpoints ?? env.ETCD_ENDPOINTS ?? DEFAULT_ETCD_ENDPOINTS)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => (/^[a-z][a-z0-9+.-]*:\/\//i.test(s) ? s : `${scheme}${s}`));
  if (endpoints.length === 0) throw new ConfigError("invalid-setting", setting, "is empty");
  for (const e of endpoints) {
    if (!/^https?:\/\/[^/]+\/?$/.test(e)) {
      throw new ConfigError(
        "invalid-setting",
        setting,
        `"${e}" is not host:port or http(s)://host:port`,
      );
    }
  }
  const out: {
    endpoints: string[];
    username?: string;
    password?: string;
    caFile?: string;
    certFile?: string;
    keyFile?: string;
  } = { endpoints };
  if (env.ETCD_USERNAME) out.username = env.ETCD_USERNAME;
  const password = readCredential(env, "ETCD_PASSWORD");
  if (password) out.password = password;
  if (env.ETCD_CA_FILE) out.caFile = env.ETCD_CA_FILE;
  if (env.ETCD_CERT_FILE) out.certFile = env.ETCD_CERT_FILE;
  if (env.ETCD_KEY_FILE) out.keyFile = env.ETCD_KEY_FILE;
  if (out.username && !out.password) {
    throw new ConfigError("missing-setting", "ETCD_PASSWORD", "is required with ETCD_USERNAME");
  }
  if (Boolean(out.certFile) !== Boolean(out.keyFile)) {
    throw new ConfigError("missing-setting", "ETCD_CERT_FILE/ETCD_KEY_FILE", "set both or neither");
  }
  return out;
}

function readSetting(setting: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "error";
    throw new ConfigError("unreadable-file", setting, `cannot read "${path}" (${code})`);
  }
}

/**
 * The largest gRPC message the etcd clients accept (grpc-js refuses over 4 MiB by default). A
 * prefix read is paged at about 2 MiB (`adapters/paged-range.ts`), but etcd cannot cut a page by
 * bytes, so a page's key limit is a guess from the page before; 64 MiB leaves room for dozens of
 * unexpected values of etcd's 1.5 MiB request maximum in one page. A page over it is asked for
 * again with fewer keys.
 */
export const ETCD_MAX_RECEIVE_BYTES = 64 * 1024 * 1024;

/** gRPC channel options every etcd client of this project sets (merge them into your own). */
export const ETCD_GRPC_OPTIONS = {
  "grpc.max_receive_message_length": ETCD_MAX_RECEIVE_BYTES,
} as const;

/** Builds etcd3 client options, reading TLS files now so a bad path fails at startup. */
export function etcdClientOptions(s: EtcdSettings): IOptions {
  const opts: IOptions = { hosts: [...s.endpoints], grpcOptions: { ...ETCD_GRPC_OPTIONS } };
  if (s.caFile || s.certFile) {
    const rootCertificate = s.caFile ? readSetting("ETCD_CA_FILE", s.caFile) : undefined;
    const certChain = s.certFile ? readSetting("ETCD_CERT_FILE", s.certFile) : undefined;
    const privateKey = s.keyFile ? readSetting("ETCD_KEY_FILE", s.keyFile) : undefined;
    opts.credentials = {
      rootCertificate: rootCertificate ?? Buffer.alloc(0),
      ...(certChain ? { certChain } : {}),
      ...(privateKey ? { privateKey } : {}),
    };
  }
  if (s.username && s.password) opts.auth = { username: s.username, password: s.password };
  return opts;
}
