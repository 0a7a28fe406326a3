import { ConfigError } from "../adapters/errors.js";
import { type EtcdSettings, etcdSettingsFromEnv } from "../adapters/etcd-options.js";
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
  readonly heartbeatSeconds: number;
  readonly resyncSeconds: number;
  readonly electionKey: string;
  /** Lease TTL of the leader election, in seconds (`PUSHER_ELECTION_TTL`). */
  readonly electionTtl: number;
  /** Written to `meta.pusher` and campaigned with: `PUSHER_ID`, else `${hostname}-${pid}`. */
  readonly pusherId: string;
}

/** One documented variable: what `--help` prints. */
export interface EnvVarDoc {
  readonly name: string;
  readonly default: string;
  readonly meaning: string;
}

/** The pusher's variables (SPEC §5 plus `PUSHER_ELECTION_TTL` and `PUSHER_ID`). */
export const PUSHER_ENV: readonly EnvVarDoc[] = [
  { name: "ETCD_ENDPOINTS", default: "http://127.0.0.1:2379", meaning: "comma-separated" },
  { name: "ETCD_USERNAME, ETCD_PASSWORD", default: "unset", meaning: "etcd auth" },
  {
    name: "ETCD_CA_FILE, ETCD_CERT_FILE, ETCD_KEY_FILE",
    default: "unset",
    meaning: "TLS / client-cert auth",
  },
  { name: "ROUTING_PREFIX", default: DEFAULT_PREFIX, meaning: "etcd prefix of the routing keys" },
  { name: "KV_SINK", default: "local", meaning: "local or cloudflare" },
  {
    name: "KV_LOCAL_PERSIST",
    default: ".wrangler/state",
    meaning: "the directory `wrangler dev --persist-to` uses",
  },
  {
    name: "KV_NAMESPACE_ID",
    default: "ROUTING binding id in wrangler.toml",
    meaning: "Workers KV namespace",
  },
  {
    name: "CF_ACCOUNT_ID, CF_API_TOKEN",
    default: "unset",
    meaning: "required for cloudflare; the token is never logged",
  },
  { name: "CF_API_BASE_URL", default: "Cloudflare's", meaning: "for tests against a stand-in" },
  {
    name: "CF_API_BUDGET",
    default: "900",
    meaning: "API requests per 5 minutes this process may send (of the account's 1,200)",
  },
  {
    name: "ORIGIN_TEMPLATE",
    default: DEFAULT_ORIGIN_TEMPLATE,
    meaning: "origin of undefined pools",
  },
  { name: "FLOOR_POOL", default: DEFAULT_FLOOR_POOL, meaning: "pool used when nothing is healthy" },
  {
    name: "PUSHER_LISTEN",
    default: "127.0.0.1:9464",
    meaning: "/metrics, /livez, /readyz (= /healthz), /status, /ui",
  },
  { name: "HEARTBEAT_SECONDS", default: "60", meaning: "meta rewrite interval" },
  {
    name: "LOG_LEVEL",
    default: "info",
    meaning: "pino level: fatal, error, warn, info, debug, trace",
  },
  { name: "RESYNC_SECONDS", default: "600", meaning: "full re-read and reconcile with KV" },
  { name: "PUSHER_ELECTION_KEY", default: "/edge/pusher/v1/leader", meaning: "election key" },
  {
    name: "PUSHER_ELECTION_TTL",
    default: "10",
    meaning: "leader lease TTL in seconds (min 2); a standby takes over within about this",
  },
  { name: "PUSHER_ID", default: "<hostname>-<pid>", meaning: "written to meta.pusher" },
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
    listen: parseListen(env.PUSHER_LISTEN?.trim() || "127.0.0.1:9464"),
    heartbeatSeconds: positiveNumber(env, "HEARTBEAT_SECONDS", 60),
    resyncSeconds: positiveNumber(env, "RESYNC_SECONDS", 600),
    electionKey,
    electionTtl: Math.ceil(positiveNumber(env, "PUSHER_ELECTION_TTL", 10, 2)),
    pusherId: env.PUSHER_ID?.trim() || `${host.hostname}-${host.pid}`,
  };
}
