import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import type { Miniflare, RequestInitCfType } from "miniflare";
import { parse } from "smol-toml";
import {
  createKvWrapper,
  KV_INNER_BINDING,
  KV_WRAPPER_ENTRYPOINT,
  KV_WRAPPER_WORKER,
  type KvReadControl,
} from "./kv-control.js";
import { newMiniflare } from "./miniflare.js";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** A response read completely (Miniflare's body must always be consumed). */
export interface EdgeResponse {
  readonly status: number;
  readonly headers: Headers;
  readonly body: string;
  /** Milliseconds from sending the request to having read the whole body. */
  readonly elapsedMs: number;
  json<T = unknown>(): T;
}

/** The public host of the Worker under test (and of its control, when there is one). */
const EDGE_HOST = "edge.test";
const CONTROL_HOST = "control.test";

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
  /**
   * Writes the `routes` key (text as given, valid or not). With `ISOLATE_CACHE_SECONDS=0` (the
   * helper's default) it then waits until the isolate has read it (`settle`), so the next
   * request is answered with whatever the Worker made of it; `{ settle: false }` skips that.
   */
  putMap(text: string, opts?: { readonly settle?: boolean }): Promise<void>;
  /** Deletes `routes`, then settles like `putMap`. */
  deleteMap(opts?: { readonly settle?: boolean }): Promise<void>;
  /**
   * Waits until the isolate has finished a read of `routes` that started after this call. The
   * map is refreshed in the background (stale-while-revalidate), so a request started after
   * a write may still be answered with the map held before it. Two reads must start after the
   * call: single-flight starts the second only once the first has been applied.
   */
  settle(): Promise<void>;
  /** How the `ROUTING` binding answers reads (delays, hangs). */
  readonly kv: KvReadControl;
  /** Present when started with `{ control: true }`. */
  readonly control: ControlWorker | null;
  /** Stops workerd. */
  dispose(): Promise<void>;
}

function cfWithCountry(country: string | null): RequestInitCfType {
  // Miniflare spreads this over its placeholder `request.cf`: an explicit `undefined`
  // removes the placeholder's country (JSON drops the key on the way into workerd).
  const cf: Record<string, string | undefined> = { country: country ?? undefined };
  return cf as RequestInitCfType;
}

/**
 * Bundles a Worker entry point for workerd, with the settings wrangler uses, `minify` and
 * `keep_names` as wrangler.toml sets them (wrangler keeps names unless told not to): the tests and
 * the bench run the code `npm run deploy` uploads. `readable` leaves it unminified (a profile's
 * function names).
 */
export async function bundleForWorkerd(
  entry: string,
  opts: { readonly readable?: boolean } = {},
): Promise<string> {
  const toml = parse(await readFile(`${ROOT}wrangler.toml`, "utf8"));
  const r = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    mainFields: ["module", "main"],
    conditions: ["workerd", "worker", "browser", "import"],
    minify: toml.minify === true && opts.readable !== true,
    keepNames: toml.keep_names !== false,
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
    | "ORIGIN_TIMEOUT_MS"
    | "ORIGIN_HEDGE_MS"
    | "ORIGIN_ONCE_TIMEOUT_MS"
    | "EDGE_EJECT_AFTER"
    | "EDGE_EJECT_SECONDS"
    | "DEBUG_TOKEN"
    | "ORIGIN_SIGNING_KEY"
    | "ORIGIN_SIGNING_KEY_PREVIOUS"
    | "OBSERVE"
    | "OBSERVE_TOKEN"
    | "OBSERVE_FLUSH_SECONDS"
    | "CACHE"
    | "CACHE_IGNORE_PARAMS"
    | "CACHE_STALE_IF_ERROR_SECONDS"
    | "PURGE_TOKEN"
    | "STEER"
    | "STEER_PARAM"
    | "STEER_TTL_SECONDS"
    | "STEER_RATE",
    string
  >
>;

/** How to start the Worker beyond its vars. */
export interface StartOptions {
  /** `false` starts it without the `ROUTING` binding (a broken deploy); default `true`. */
  readonly routingBinding?: boolean;
  /**
   * Also start a control: the same Worker in the same workerd, with its own ungated KV and an
   * hour of isolate cache, reached with `control`. Whatever slows the control too (the machine,
   * workerd, the origins, the client) is not the edge waiting on its KV.
   */
  readonly control?: boolean;
  /**
   * Serve workerd's V8 inspector on this loopback port (each worker at `ws://…/core:user:NAME`),
   * for reading the isolate's heap.
   */
  readonly inspectorPort?: number;
  /**
   * The `OBSERVATIONS` aggregator (docs/reference.md §12): by default the Worker's own class, as
   * wrangler.toml binds it; `{ script, className }` binds a class of another Worker module (an
   * aggregator that fails); `false` starts the Worker without the binding.
   */
  readonly observations?: { readonly script: string; readonly className: string } | false;
  /** Keep Durable Object (and KV) storage in this directory, as files the test can read. */
  readonly persistDir?: string;
  /** Another Worker entry point to run instead of worker/index.ts (bundled like it). */
  readonly entry?: string;
}

/** The Worker script that holds `StartOptions.observations`' class. */
const OBSERVATIONS_WORKER = "observations";

/** The control Worker of `StartOptions.control`. */
export interface ControlWorker {
  dispatch(path: string, opts?: DispatchOptions): Promise<EdgeResponse>;
  putMap(text: string): Promise<void>;
}

/**
 * Starts the bundled Worker in Miniflare. `ROUTING` is Miniflare's in-memory KV namespace
 * behind a gate the test controls (`kv`: delays and hangs; see kv-control.ts).
 */
export async function startWorker(
  vars: WorkerVars = {},
  opts: StartOptions = {},
): Promise<TestWorker> {
  const withKv = opts.routingBinding ?? true;
  const withControl = opts.control ?? false;
  const [script, date] = await Promise.all([
    opts.entry === undefined ? bundleWorker() : bundleForWorkerd(opts.entry),
    compatibilityDate(),
  ]);
  const wrapper = createKvWrapper();
  const bindings = { ISOLATE_CACHE_SECONDS: "0", ...vars };
  const observations = opts.observations ?? null;
  const aggregator =
    observations === false
      ? {}
      : {
          durableObjects: {
            OBSERVATIONS: {
              className: observations?.className ?? "ObservationAggregator",
              useSQLite: true,
              ...(observations ? { scriptName: OBSERVATIONS_WORKER } : {}),
            },
          },
        };
  const mf = newMiniflare({
    workers: [
      {
        name: "edge",
        modules: true,
        script,
        compatibilityDate: date,
        bindings,
        ...aggregator,
        ...(withKv
          ? {
              serviceBindings: {
                ROUTING: { name: KV_WRAPPER_WORKER, entrypoint: KV_WRAPPER_ENTRYPOINT },
              },
            }
          : {}),
        ...(withControl ? { routes: [`${EDGE_HOST}/*`] } : {}),
      },
      ...(withKv ? [{ ...wrapper.worker, compatibilityDate: date }] : []),
      ...(observations
        ? [
            {
              name: OBSERVATIONS_WORKER,
              modules: true,
              script: observations.script,
              compatibilityDate: date,
              // Miniflare defines a class's namespace in the Worker that binds it itself.
              durableObjects: { SELF: { className: observations.className, useSQLite: true } },
            },
          ]
        : []),
      ...(withControl
        ? [
            {
              name: "control",
              modules: true,
              script,
              compatibilityDate: date,
              bindings: { ...bindings, ISOLATE_CACHE_SECONDS: "3600" },
              kvNamespaces: { ROUTING: "control-routing" },
              routes: [`${CONTROL_HOST}/*`],
            },
          ]
        : []),
    ],
    // A fixed placeholder `request.cf` instead of downloading one.
    cf: false,
    ...(opts.inspectorPort === undefined ? {} : { inspectorPort: opts.inspectorPort }),
    ...(opts.persistDir === undefined ? {} : { resourcePersistencePath: opts.persistDir }),
  });
  await mf.ready;
  const kv = withKv ? await mf.getKVNamespace(KV_INNER_BINDING, KV_WRAPPER_WORKER) : null;
  const routing = () => {
    if (!kv) throw new Error("started without the ROUTING binding");
    return kv;
  };
  const settlesByDefault = bindings.ISOLATE_CACHE_SECONDS === "0";

  const dispatchTo = async (
    host: string,
    path: string,
    opts: DispatchOptions = {},
  ): Promise<EdgeResponse> => {
    const cf = opts.country === undefined ? undefined : cfWithCountry(opts.country);
    const started = performance.now();
    const res = await mf.dispatchFetch(`http://${host}${path}`, {
      method: opts.method ?? "GET",
      headers: opts.headers ?? {},
      ...(opts.body === undefined ? {} : { body: opts.body }),
      ...(cf ? { cf } : {}),
      redirect: "manual",
    });
    const body = await res.text();
    const elapsedMs = performance.now() - started;
    const headers = new Headers();
    res.headers.forEach((v, k) => {
      headers.append(k, v);
    });
    return {
      status: res.status,
      headers,
      body,
      elapsedMs,
      json<T>() {
        return JSON.parse(body) as T;
      },
    };
  };

  const dispatch = (path: string, opts?: DispatchOptions) => dispatchTo(EDGE_HOST, path, opts);
  const controlKv = withControl ? await mf.getKVNamespace("ROUTING", "control") : null;
  const control: ControlWorker | null = controlKv
    ? {
        dispatch: (path, o) => dispatchTo(CONTROL_HOST, path, o),
        async putMap(text) {
          await controlKv.put("routes", text);
        },
      }
    : null;

  const settle = async () => {
    const target = wrapper.control.started + 2;
    const deadline = Date.now() + 15_000;
    while (wrapper.control.started < target) {
      if (Date.now() > deadline) throw new Error("the Worker did not re-read routes");
      await dispatch("/__edge/health");
      if (wrapper.control.started < target) await sleep(1);
    }
  };

  return {
    mf,
    kv: wrapper.control,
    control,
    dispatch,
    settle,
    async putMap(text, o = {}) {
      await routing().put("routes", text);
      if (o.settle ?? settlesByDefault) await settle();
    },
    async deleteMap(o = {}) {
      await routing().delete("routes");
      if (o.settle ?? settlesByDefault) await settle();
    },
    async dispose() {
      // Hung reads would otherwise wait on a gate nobody opens.
      wrapper.control.release();
      await mf.dispose();
    },
  };
}
