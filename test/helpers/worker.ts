import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { Miniflare, RequestInitCfType } from "miniflare";
import { parse } from "smol-toml";
import { newMiniflare } from "./miniflare.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** A response read completely (Miniflare's body must always be consumed). */
export interface EdgeResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
  json<T = unknown>(): T;
}

/** Options for one request to the Worker. */
export interface DispatchOptions {
  /** `request.cf.country`; `null` sends no country; unset uses Miniflare's placeholder (US). */
  readonly country?: string | null;
  readonly headers?: Readonly<Record<string, string>>;
  readonly method?: string;
  readonly body?: string;
}

/** The Worker running in a real workerd. */
export interface TestWorker {
  readonly mf: Miniflare;
  dispatch(path: string, opts?: DispatchOptions): Promise<EdgeResponse>;
  /** Writes the `routes` key (text as given, valid or not). */
  putMap(text: string): Promise<void>;
  deleteMap(): Promise<void>;
  /** Stops workerd. */
  dispose(): Promise<void>;
}

function cfWithCountry(country: string | null): RequestInitCfType {
  // Miniflare spreads this over its placeholder `request.cf`: an explicit `undefined`
  // removes the placeholder's country (JSON drops the key on the way into workerd).
  const cf: Record<string, string | undefined> = { country: country ?? undefined };
  return cf as RequestInitCfType;
}

/** Bundles a Worker entry point for workerd, with the settings wrangler uses. */
export async function bundleForWorkerd(entry: string): Promise<string> {
  const r = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    mainFields: ["module", "main"],
    conditions: ["workerd", "worker", "browser", "import"],
    logLevel: "silent",
  });
  const out = r.outputFiles[0];
  if (!out) throw new Error("esbuild produced no output");
  return out.text;
}

let bundled: Promise<string> | undefined;

/** Bundles `worker/index.ts` once per test process, as wrangler would for workerd. */
export function bundleWorker(): Promise<string> {
  bundled ??= bundleForWorkerd(`${ROOT}worker/index.ts`);
  return bundled;
}

/** The `compatibility_date` from wrangler.toml, so tests run what `wrangler dev` runs. */
export async function compatibilityDate(): Promise<string> {
  const toml = parse(await readFile(`${ROOT}wrangler.toml`, "utf8"));
  const date = toml.compatibility_date;
  if (typeof date !== "string") throw new Error("wrangler.toml has no compatibility_date");
  return date;
}

/** Vars for the Worker; unset ones fall back to the Worker's defaults. */
export type WorkerVars = Partial<
  Record<
    | "ORIGIN_TEMPLATE"
    | "FLOOR_POOL"
    | "KV_CACHE_TTL"
    | "ISOLATE_CACHE_SECONDS"
    | "MAX_ATTEMPTS"
    | "DEBUG_TOKEN",
    string
  >
>;

/** How to start the Worker beyond its vars. */
export interface StartOptions {
  /** `false` starts it without the `ROUTING` binding (a broken deploy); default `true`. */
  readonly routingBinding?: boolean;
}

/** Starts the bundled Worker in Miniflare with an in-memory `ROUTING` namespace. */
export async function startWorker(
  vars: WorkerVars = {},
  opts: StartOptions = {},
): Promise<TestWorker> {
  const withKv = opts.routingBinding ?? true;
  const [script, date] = await Promise.all([bundleWorker(), compatibilityDate()]);
  const mf = newMiniflare({
    modules: true,
    script,
    compatibilityDate: date,
    kvNamespaces: withKv ? ["ROUTING"] : [],
    bindings: { ISOLATE_CACHE_SECONDS: "0", ...vars },
    // A fixed placeholder `request.cf` instead of downloading one.
    cf: false,
  });
  await mf.ready;
  const kv = withKv ? await mf.getKVNamespace("ROUTING") : null;
  const routing = () => {
    if (!kv) throw new Error("started without the ROUTING binding");
    return kv;
  };

  return {
    mf,
    async dispatch(path, opts = {}) {
      const cf = opts.country === undefined ? undefined : cfWithCountry(opts.country);
      const res = await mf.dispatchFetch(`http://edge.test${path}`, {
        method: opts.method ?? "GET",
        headers: opts.headers ?? {},
        ...(opts.body === undefined ? {} : { body: opts.body }),
        ...(cf ? { cf } : {}),
        redirect: "manual",
      });
      const body = await res.text();
      const headers = new Headers();
      res.headers.forEach((v, k) => {
        headers.append(k, v);
      });
      return {
        status: res.status,
        headers,
        body,
        json<T>() {
          return JSON.parse(body) as T;
        },
      };
    },
    async putMap(text) {
      await routing().put("routes", text);
    },
    async deleteMap() {
      await routing().delete("routes");
    },
    async dispose() {
      await mf.dispose();
    },
  };
}
