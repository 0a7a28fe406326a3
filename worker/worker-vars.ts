import type { VarRange } from "../core/contract/env-vars.js";
import { DEFAULT_FLOOR_POOL, DEFAULT_ORIGIN_TEMPLATE } from "../core/contract/route-settings.js";
import {
  DEFAULT_STEER_PARAM,
  STEER_RATE_RANGE,
  STEER_TTL_RANGE_S,
} from "../core/contract/steer-settings.js";
import { CACHE_STALE_IF_ERROR_RANGE_S } from "./cache/cache-settings.js";
import { OBSERVE_FLUSH_RANGE_S } from "./observe/observe-settings.js";
import { MAX_EJECT_MS } from "./outlier-ejection.js";
import {
  EJECT_AFTER_RANGE,
  EJECT_SECONDS_RANGE,
  ISOLATE_CACHE_RANGE_S,
  KV_CACHE_TTL_RANGE_S,
  KV_MIN_CACHE_TTL,
  MAX_ATTEMPTS_RANGE,
  ORIGIN_HEDGE_RANGE_MS,
  ORIGIN_ONCE_TIMEOUT_RANGE_MS,
  ORIGIN_TIMEOUT_RANGE_MS,
} from "./settings.js";

/** One binding, var or secret the Worker reads: docs/reference.md §4's table shows these. */
export interface WorkerVarDoc {
  readonly name: string;
  /** A binding (KV, Durable Object), a `[vars]` entry, or a secret (`wrangler secret put`). */
  readonly kind: "binding" | "var" | "secret";
  /** The default as a value (`"60"`), or a phrase such as `"unset"`. */
  readonly default: string;
  /** Markdown. */
  readonly meaning: string;
}

function bounds(range: VarRange): string {
  return `${range.min}–${range.max}`;
}

/** The Worker's bindings, vars and secrets (`npm run docs:env` writes §4's table from these). */
export const WORKER_VARS: readonly WorkerVarDoc[] = [
  {
    name: "ROUTING",
    kind: "binding",
    default: "—",
    meaning: "the KV namespace holding `routes` and `meta`",
  },
  {
    name: "ORIGIN_TEMPLATE",
    kind: "var",
    default: DEFAULT_ORIGIN_TEMPLATE,
    meaning:
      "origin of a pool without a `pool/` definition; printable ASCII (an international host in its `xn--` form); an unusable value falls back to the default",
  },
  {
    name: "FLOOR_POOL",
    kind: "var",
    default: DEFAULT_FLOOR_POOL,
    meaning: "the pool of last resort",
  },
  {
    name: "KV_CACHE_TTL",
    kind: "var",
    default: String(KV_CACHE_TTL_RANGE_S.fallback),
    meaning: `seconds, \`cacheTtl\` of \`ROUTING.get\`; raised to KV's minimum of ${KV_MIN_CACHE_TTL} (each second above it delays every change at the edge)`,
  },
  {
    name: "ISOLATE_CACHE_SECONDS",
    kind: "var",
    default: String(ISOLATE_CACHE_RANGE_S.fallback),
    meaning: `how long a parsed map stays fresh in the isolate (${bounds(ISOLATE_CACHE_RANGE_S)}; 0: re-read on every request)`,
  },
  {
    name: "MAX_ATTEMPTS",
    kind: "var",
    default: String(MAX_ATTEMPTS_RANGE.fallback),
    meaning: `origins tried in total for a GET/HEAD (${bounds(MAX_ATTEMPTS_RANGE)})`,
  },
  {
    name: "ORIGIN_TIMEOUT_MS",
    kind: "var",
    default: String(ORIGIN_TIMEOUT_RANGE_MS.fallback),
    meaning: `GET/HEAD: ms from sending one attempt to its response headers (${bounds(ORIGIN_TIMEOUT_RANGE_MS)}; the response body is not timed)`,
  },
  {
    name: "ORIGIN_HEDGE_MS",
    kind: "var",
    default: String(ORIGIN_HEDGE_RANGE_MS.fallback),
    meaning: `GET/HEAD: ms without response headers after which the next pool of the chain is asked as well; the first answer wins (${bounds(ORIGIN_HEDGE_RANGE_MS)}; at or above \`ORIGIN_TIMEOUT_MS\` it never hedges)`,
  },
  {
    name: "ORIGIN_ONCE_TIMEOUT_MS",
    kind: "var",
    default: String(ORIGIN_ONCE_TIMEOUT_RANGE_MS.fallback),
    meaning: `any other method (sent once): ms from the end of the request body to the response headers (${bounds(ORIGIN_ONCE_TIMEOUT_RANGE_MS)}; the upload is not timed)`,
  },
  {
    name: "EDGE_EJECT_AFTER",
    kind: "var",
    default: String(EJECT_AFTER_RANGE.fallback),
    meaning: `origin faults in a row (below) that eject an origin from the isolate (${bounds(EJECT_AFTER_RANGE)}; \`0\`: never pass an origin over)`,
  },
  {
    name: "EDGE_EJECT_SECONDS",
    kind: "var",
    default: String(EJECT_SECONDS_RANGE.fallback),
    meaning: `how long a first ejection lasts; each ejection in a row lasts this much longer, up to ${MAX_EJECT_MS / 1000} s (${bounds(EJECT_SECONDS_RANGE)})`,
  },
  {
    name: "AFFINITY_COOKIE",
    kind: "var",
    default: "unset",
    meaning: "name of a cookie whose value keys weighted splits (not a valid cookie name: unset)",
  },
  {
    name: "DEBUG_TOKEN",
    kind: "secret",
    default: "unset",
    meaning: "unset or empty: debug features off",
  },
  {
    name: "ORIGIN_SIGNING_KEY",
    kind: "secret",
    default: "unset",
    meaning: "signs every origin request with `X-Edge-Signature` (§11); unset or empty: unsigned",
  },
  {
    name: "ORIGIN_SIGNING_KEY_PREVIOUS",
    kind: "secret",
    default: "unset",
    meaning: "during a key rotation, a second `v1` made with the old key (§11)",
  },
  {
    name: "OBSERVATIONS",
    kind: "binding",
    default: "—",
    meaning:
      "the Durable Object namespace of the aggregator of what viewers get (`ObservationAggregator`, §12); missing: nothing is recorded",
  },
  {
    name: "OBSERVE_FLUSH_SECONDS",
    kind: "var",
    default: String(OBSERVE_FLUSH_RANGE_S.fallback),
    meaning: `an isolate flushes its sums to the aggregator at most this often (${bounds(OBSERVE_FLUSH_RANGE_S)}; \`0\`: after every request)`,
  },
  {
    name: "OBSERVE",
    kind: "var",
    default: "unset",
    meaning: "`off` (any case): nothing is recorded (§12)",
  },
  {
    name: "OBSERVE_TOKEN",
    kind: "secret",
    default: "unset",
    meaning:
      "bearer token of `GET /__edge/observations` (§12); unset or empty: that path is a `404`",
  },
  {
    name: "CACHE",
    kind: "var",
    default: "on",
    meaning: "`off` (any case): every proxied request bypasses the edge cache (§14)",
  },
  {
    name: "CACHE_IGNORE_PARAMS",
    kind: "var",
    default: "empty",
    meaning: "comma-separated query parameters left out of the cache key (§14)",
  },
  {
    name: "CACHE_STALE_IF_ERROR_SECONDS",
    kind: "var",
    default: String(CACHE_STALE_IF_ERROR_RANGE_S.fallback),
    meaning: `how long past freshness a cached copy may be served, marked \`STALE\`, when every pool fails (${bounds(CACHE_STALE_IF_ERROR_RANGE_S)}; \`0\`: only where the origin says \`stale-if-error\`)`,
  },
  {
    name: "PURGE_TOKEN",
    kind: "secret",
    default: "unset",
    meaning: "bearer token of `POST /__edge/purge` (§14); unset or empty: that path is a `404`",
  },
  {
    name: "STEER",
    kind: "var",
    default: "off",
    meaning:
      "`on` (any case): HLS multivariant playlists and DASH MPDs gain steering tags as they pass through (§15)",
  },
  {
    name: "STEER_PARAM",
    kind: "var",
    default: DEFAULT_STEER_PARAM,
    meaning:
      "the query parameter that pins a request to a pool (§15); never forwarded; not a URL-safe name of 1–64 characters: the default",
  },
  {
    name: "STEER_TTL_SECONDS",
    kind: "var",
    default: String(STEER_TTL_RANGE_S.fallback),
    meaning: `the steering manifest's \`TTL\` (${bounds(STEER_TTL_RANGE_S)})`,
  },
  {
    name: "STEER_RATE",
    kind: "var",
    default: String(STEER_RATE_RANGE.fallback),
    meaning: `steering requests per second one isolate answers; past it \`429\` with \`Retry-After\` (${bounds(STEER_RATE_RANGE)}; \`0\`: no cap)`,
  },
];
