import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse } from "smol-toml";
import { readCredential } from "../credential.js";
import { ConfigError } from "../errors.js";
import { cloudflareIdProblem } from "./cloudflare-id.js";
import { CLOUDFLARE_ACCOUNT_LIMIT, DEFAULT_API_BUDGET } from "./request-budget.js";
import { Secret } from "./secret.js";

/** Default for `KV_LOCAL_PERSIST`: what `wrangler dev` uses when `--persist-to` is not given. */
export const DEFAULT_LOCAL_PERSIST = ".wrangler/state";

/**
 * Wrangler 4 passes `resourcePersistencePath: <persist-to>/v3` to Miniflare (getDefaultPersistRoot in
 * wrangler's dev and `kv --local` code), and Miniflare keys KV storage by namespace id, not
 * binding name, so a Miniflare on this root and `wrangler dev --persist-to <persistDir>` share data.
 */
export function localPersistRoot(persistDir: string): string {
  return join(persistDir, "v3");
}

/** The KV binding name the Worker reads (docs/reference.md, "The Worker"). */
export const ROUTING_BINDING = "ROUTING";

/** A local Miniflare namespace persisted where `wrangler dev --persist-to <persistDir>` looks. */
export interface LocalKvSettings {
  readonly kind: "local";
  /** Absolute `--persist-to` directory (KV lands under `<persistDir>/v3/kv`). */
  readonly persistDir: string;
  readonly namespaceId: string;
}

/** The Cloudflare REST API (`CF_API_BASE_URL` overrides the base for tests). */
export interface CloudflareKvSettings {
  readonly kind: "cloudflare";
  readonly namespaceId: string;
  readonly accountId: string;
  readonly apiToken: Secret;
  readonly apiBaseUrl?: string;
  /** Most API requests this process sends per 5 minutes (`CF_API_BUDGET`). */
  readonly apiBudget: number;
}

/** Snapshot files for hosts that route without KV (`KV_SINK=file`). */
export interface FileKvSettings {
  readonly kind: "file";
  /** Absolute `KV_FILE_DIR`. */
  readonly dir: string;
}

/** Default for `KV_FILE_DIR`. */
export const DEFAULT_KV_FILE_DIR = "/var/lib/edge-router";

/** Where KV writes go: `KV_SINK` (docs/reference.md, "The pusher"). */
export type KvSettings = LocalKvSettings | CloudflareKvSettings | FileKvSettings;

const NAMESPACE_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** Where the unit reads the pusher's settings from (deploy/edge-pusher.service, EnvironmentFile=). */
const ENV_FILE = "/etc/edge-router/pusher.env";

function namespaceIdFromWrangler(cwd: string): string {
  const file = resolve(cwd, "wrangler.toml");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "error";
    throw new ConfigError(
      "unreadable-file",
      "KV_NAMESPACE_ID",
      `unset, and cannot read "${file}" (${code}) for the ${ROUTING_BINDING} binding's id`,
    );
  }
  let doc: unknown;
  try {
    doc = parse(text);
  } catch {
    throw new ConfigError("unreadable-file", "KV_NAMESPACE_ID", `unset, and "${file}" is not TOML`);
  }
  const list = (doc as { kv_namespaces?: unknown }).kv_namespaces;
  const binding = Array.isArray(list)
    ? list.find((n: unknown) => (n as { binding?: unknown })?.binding === ROUTING_BINDING)
    : undefined;
  const id = (binding as { id?: unknown } | undefined)?.id;
  if (typeof id !== "string" || id === "") {
    throw new ConfigError(
      "missing-setting",
      "KV_NAMESPACE_ID",
      `unset, and "${file}" has no [[kv_namespaces]] binding "${ROUTING_BINDING}" with an id`,
    );
  }
  return id;
}

/**
 * A URL's host (`URL.hostname`, which writes every IPv4 spelling as a dotted quad) that is a
 * literal loopback address, 127.0.0.0/8 or `[::1]`: traffic to it never leaves the machine. No
 * name is: Node resolves `localhost` and `*.localhost` through the system resolver, which may
 * answer with any address.
 */
export function isLoopbackHost(hostname: string): boolean {
  if (hostname === "[::1]") return true;
  const octets = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(hostname);
  return octets?.slice(1).every((o) => Number(o) <= 255) === true;
}

/** `CF_API_BUDGET`: a whole number of requests per 5 minutes, at most the account's 1,200. */
function apiBudgetFrom(env: Readonly<Record<string, string | undefined>>): number {
  const raw = env.CF_API_BUDGET?.trim();
  if (raw === undefined || raw === "") return DEFAULT_API_BUDGET;
  const n = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(n >= 1 && n <= CLOUDFLARE_ACCOUNT_LIMIT.limit)) {
    throw new ConfigError(
      "invalid-setting",
      "CF_API_BUDGET",
      `"${raw}" is not a number of requests per 5 minutes from 1 to ${CLOUDFLARE_ACCOUNT_LIMIT.limit}`,
    );
  }
  return n;
}

function required(env: Readonly<Record<string, string | undefined>>, name: string): string {
  const v = env[name]?.trim();
  if (!v) throw new ConfigError("missing-setting", name, "is required when KV_SINK=cloudflare");
  return v;
}

/**
 * Reads `KV_SINK`, `KV_LOCAL_PERSIST`, `KV_FILE_DIR`, `KV_NAMESPACE_ID`, `CF_ACCOUNT_ID`, `CF_API_TOKEN`,
 * `CF_API_BASE_URL` and `CF_API_BUDGET` (docs/reference.md, the pusher's variables; https unless loopback). Throws
 * ConfigError naming the variable; never echoes the token.
 */
export function kvSettingsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  opts: { readonly cwd: string },
): KvSettings {
  const sink = env.KV_SINK?.trim() || "local";
  if (sink !== "local" && sink !== "cloudflare" && sink !== "file") {
    throw new ConfigError(
      "invalid-setting",
      "KV_SINK",
      `"${sink}" is not "local", "cloudflare" or "file"`,
    );
  }
  if (sink === "file") {
    return { kind: "file", dir: resolve(opts.cwd, env.KV_FILE_DIR?.trim() || DEFAULT_KV_FILE_DIR) };
  }
  // Check credentials before touching wrangler.toml, so the first error names what is missing.
  const accountId = sink === "cloudflare" ? required(env, "CF_ACCOUNT_ID") : "";
  const token =
    sink === "cloudflare"
      ? required({ CF_API_TOKEN: readCredential(env, "CF_API_TOKEN") }, "CF_API_TOKEN")
      : "";
  const namespaceId = env.KV_NAMESPACE_ID?.trim() || namespaceIdFromWrangler(opts.cwd);
  if (!NAMESPACE_ID.test(namespaceId)) {
    throw new ConfigError("invalid-setting", "KV_NAMESPACE_ID", `"${namespaceId}" is not an id`);
  }
  if (sink === "local") {
    const persistDir = resolve(opts.cwd, env.KV_LOCAL_PERSIST?.trim() || DEFAULT_LOCAL_PERSIST);
    return { kind: "local", persistDir, namespaceId };
  }
  const namespaceFrom = env.KV_NAMESPACE_ID?.trim()
    ? ENV_FILE
    : `${resolve(opts.cwd, "wrangler.toml")} (the ${ROUTING_BINDING} binding, read because KV_NAMESPACE_ID is unset)`;
  for (const [name, value, from] of [
    ["CF_ACCOUNT_ID", accountId, ENV_FILE],
    ["KV_NAMESPACE_ID", namespaceId, namespaceFrom],
  ] as const) {
    const problem = cloudflareIdProblem(value);
    if (problem?.placeholder) {
      throw new ConfigError(
        "placeholder-setting",
        name,
        `${problem.message}: edit ${from} and set the real id (the template is deploy/pusher.env.example)`,
      );
    }
    if (problem) throw new ConfigError("invalid-setting", name, problem.message);
  }
  const apiBudget = apiBudgetFrom(env);
  const base = env.CF_API_BASE_URL?.trim();
  if (base !== undefined && base !== "") {
    let url: URL | undefined;
    try {
      url = new URL(base);
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
      throw new ConfigError(
        "invalid-setting",
        "CF_API_BASE_URL",
        `"${base}" is not an http(s) URL`,
      );
    }
    // The API token travels in every request's Authorization header: plain http only on loopback.
    if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
      throw new ConfigError(
        "invalid-setting",
        "CF_API_BASE_URL",
        `"${base}" must be https (plain http is allowed only to a loopback address, 127.0.0.0/8 or [::1], such as a local stand-in's; not to a name such as localhost, which DNS could send elsewhere)`,
      );
    }
    return {
      kind: "cloudflare",
      namespaceId,
      accountId,
      apiToken: new Secret(token),
      apiBaseUrl: base,
      apiBudget,
    };
  }
  return { kind: "cloudflare", namespaceId, accountId, apiToken: new Secret(token), apiBudget };
}
