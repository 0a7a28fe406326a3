import type { EnvVarDoc } from "../adapters/env-var-doc.js";
import { ConfigError } from "../adapters/errors.js";
import {
  DEFAULT_ETCD_ENDPOINTS,
  type EtcdSettings,
  etcdSettingsFromEnv,
} from "../adapters/etcd-options.js";
import { parseAllowedHosts } from "../adapters/host-allow-list.js";
import { DEFAULT_HEARTBEAT_SECONDS, DEFAULT_PUSHER_LISTEN } from "../adapters/pusher-defaults.js";
import { type RoutingSettings, routingSettingsFromEnv } from "../adapters/routing-settings.js";
import {
  DEFAULT_FLOOR_POOL,
  DEFAULT_ORIGIN_TEMPLATE,
  DEFAULT_PREFIX,
  DEFAULT_SHED_RECOVER_SECONDS,
} from "../core/index.js";

/** Everything the pusher reads from its environment, except the KV sink (see `kvSettingsFromEnv`). */
export interface PusherConfig extends RoutingSettings {
  readonly etcd: EtcdSettings;
  readonly listen: { readonly host: string; readonly port: number };
  /** Host names the listener answers to besides its own (`PUSHER_ALLOWED_HOSTS`). */
  readonly allowedHosts: readonly string[];
  readonly heartbeatSeconds: number;
  readonly resyncSeconds: number;
  readonly electionKey: string;
  /** Lease TTL of the leader election, in seconds (`PUSHER_ELECTION_TTL`). */
  readonly electionTtl: number;
  /** Written to `meta.pusher` and campaigned with: `PUSHER_ID`, else `${hostname}-${pid}`. */
  readonly pusherId: string;
}

/** The pusher's variables (docs/reference.md §5; `npm run docs:env` writes its table from these). */
export const PUSHER_ENV: readonly EnvVarDoc[] = [
  {
    name: "ETCD_ENDPOINTS",
    default: DEFAULT_ETCD_ENDPOINTS,
    meaning: "comma-separated etcd members; list every one",
    details: "a bare `host:port` gets `http://` (`https://` when a TLS file is set)",
  },
  {
    name: "ETCD_USERNAME, ETCD_PASSWORD",
    default: "unset",
    meaning: "etcd auth",
    details:
      "ETCD_PASSWORD and CF_API_TOKEN, when unset, are read from `$CREDENTIALS_DIRECTORY/<name>` (systemd's `LoadCredential=`), so the secret is in no environment",
  },
  {
    name: "ETCD_CA_FILE, ETCD_CERT_FILE, ETCD_KEY_FILE",
    default: "unset",
    meaning: "TLS / client-certificate auth",
  },
  { name: "ROUTING_PREFIX", default: DEFAULT_PREFIX, meaning: "etcd prefix of the routing keys" },
  {
    name: "KV_SINK",
    default: "local",
    meaning:
      "local (Miniflare), cloudflare (the REST API) or file (KV as files: routes.json and meta.json, no election)",
    details: "`local` needs the `miniflare` package",
  },
  {
    name: "KV_LOCAL_PERSIST",
    default: ".wrangler/state",
    meaning: "the directory `wrangler dev --persist-to` uses",
    details: "so a local `wrangler dev` sees what the pusher writes",
  },
  {
    name: "KV_FILE_DIR",
    default: "/var/lib/edge-router",
    meaning: "KV_SINK=file: where routes.json and meta.json are written (no election)",
  },
  {
    name: "KV_NAMESPACE_ID",
    default: "the ROUTING binding's id in wrangler.toml (top level)",
    meaning: "Workers KV namespace",
    details:
      "for cloudflare, 32 hexadecimal characters; a template's placeholder (`REPLACE_WITH_…`, all zeros) is refused at start, naming the file to edit",
  },
  {
    name: "CF_ACCOUNT_ID, CF_API_TOKEN",
    default: "required for cloudflare",
    meaning: "the Cloudflare account and API token; the token is never logged",
    details:
      "the account id is 32 hexadecimal characters, and a placeholder is refused like KV_NAMESPACE_ID's; use an account-owned token (docs/cloudflare-account.md)",
  },
  {
    name: "CF_API_BASE_URL",
    default: "Cloudflare's",
    meaning: "for tests against a stand-in",
    details:
      "must be `https:` unless the host is a loopback address (`127.0.0.0/8`, `[::1]`; not a name such as `localhost`, which is resolved)",
  },
  {
    name: "CF_API_BUDGET",
    default: "900",
    meaning: "API requests per 5 minutes this process may send (1-1200, of the account's 1,200)",
    details:
      "every token, edgectl, wrangler and the dashboard count against the account's 1,200; past the budget a call fails `rate-limited` locally and is retried with backoff",
  },
  {
    name: "ORIGIN_TEMPLATE",
    default: DEFAULT_ORIGIN_TEMPLATE,
    meaning: "origin of a pool without a pool/ definition",
    details: "must match the Worker's (§4)",
  },
  {
    name: "FLOOR_POOL",
    default: DEFAULT_FLOOR_POOL,
    meaning: "pool used when nothing is healthy",
    details: "must match the Worker's (§4)",
  },
  {
    name: "PUSHER_LISTEN",
    default: DEFAULT_PUSHER_LISTEN,
    meaning: "/livez, /readyz (= /healthz), /status, /metrics, /ui",
  },
  {
    name: "PUSHER_ALLOWED_HOSTS",
    default: "unset",
    meaning:
      "comma-separated host names PUSHER_LISTEN also answers to (e.g. the name Prometheus scrapes); other Host headers get 421",
  },
  {
    name: "HEARTBEAT_SECONDS",
    default: String(DEFAULT_HEARTBEAT_SECONDS),
    meaning: "meta rewrite interval",
  },
  {
    name: "RESYNC_SECONDS",
    default: "600",
    meaning: "full re-read and reconcile with KV (anti-entropy)",
  },
  {
    name: "PUSHER_ELECTION_KEY",
    default: "/edge/pusher/v1/leader",
    meaning: "election key, outside ROUTING_PREFIX",
    details: "candidates at `<key>/<lease id in hex>`",
  },
  {
    name: "PUSHER_ELECTION_TTL",
    default: "10",
    meaning: "leader lease TTL in seconds (min 2); a standby takes over within about this",
    details: "a leader stops writing after ⅔ of the TTL without a renewal",
  },
  { name: "PUSHER_ID", default: "<hostname>-<pid>", meaning: "written to meta.pusher" },
  {
    name: "LOG_LEVEL",
    default: "info",
    meaning: "pino level: fatal, error, warn, info, debug, trace",
  },
  {
    name: "NOTIFY_SOCKET, WATCHDOG_USEC, WATCHDOG_PID",
    default: "set by systemd",
    meaning:
      "a `Type=notify` unit's socket and `WatchdogSec`: the pusher sends `READY=1` once it listens and `WATCHDOG=1` every half `WatchdogSec` (through `systemd-notify`)",
  },
  {
    name: "CREDENTIALS_DIRECTORY",
    default: "set by systemd",
    meaning:
      "where `LoadCredential=` puts the secrets; `CF_API_TOKEN` and `ETCD_PASSWORD` are read from it when unset",
  },
  {
    name: "SHED_RECOVER_SECONDS",
    default: String(DEFAULT_SHED_RECOVER_SECONDS),
    meaning: "a slow pool's shed share falls at most one 10 % step per this many seconds",
  },
];

/** The `--help` text: usage plus every variable with its default. */
export function helpText(): string {
  const width = Math.max(...PUSHER_ENV.map((v) => v.name.length));
  const rows = PUSHER_ENV.map(
    (v) => `  ${v.name.padEnd(width)}  ${v.meaning} (default: ${v.default})`,
  );
  return [
    "Usage: edge-pusher",
    "",
    "Watches the etcd routing prefix, compiles the country map and writes it to Workers KV.",
    "Configured by environment variables:",
    "",
    ...rows,
    "",
  ].join("\n");
}

type Env = Readonly<Record<string, string | undefined>>;

function positiveNumber(env: Env, name: string, fallback: number, min = 1): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min) {
    throw new ConfigError("invalid-setting", name, `"${raw}" is not a number >= ${min}`);
  }
  return n;
}

function parseListen(raw: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(raw.trim());
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m?.[1] || !Number.isInteger(port) || port > 65535) {
    throw new ConfigError("invalid-setting", "PUSHER_LISTEN", `"${raw}" is not host:port`);
  }
  return { host: m[1].replace(/^\[|\]$/g, ""), port };
}

/** Parses the pusher's settings from an environment object (only `main.ts` passes `process.env`). */
export function pusherConfigFromEnv(
  env: Env,
  host: { readonly hostname: string; readonly pid: number },
): PusherConfig {
  const routing = routingSettingsFromEnv(env);
  const { prefix } = routing;
  const electionKey = (env.PUSHER_ELECTION_KEY?.trim() || "/edge/pusher/v1/leader").replace(
    /\/+$/,
    "",
  );
  if (!electionKey || electionKey.startsWith(prefix) || prefix.startsWith(`${electionKey}/`)) {
    throw new ConfigError(
      "invalid-setting",
      "PUSHER_ELECTION_KEY",
      "must be non-empty and outside ROUTING_PREFIX",
    );
  }
  return {
    ...routing,
    etcd: etcdSettingsFromEnv(env),
    listen: parseListen(env.PUSHER_LISTEN?.trim() || DEFAULT_PUSHER_LISTEN),
    allowedHosts: parseAllowedHosts("PUSHER_ALLOWED_HOSTS", env.PUSHER_ALLOWED_HOSTS),
    heartbeatSeconds: positiveNumber(env, "HEARTBEAT_SECONDS", DEFAULT_HEARTBEAT_SECONDS),
    resyncSeconds: positiveNumber(env, "RESYNC_SECONDS", 600),
    electionKey,
    electionTtl: Math.ceil(positiveNumber(env, "PUSHER_ELECTION_TTL", 10, 2)),
    pusherId: env.PUSHER_ID?.trim() || `${host.hostname}-${host.pid}`,
  };
}
