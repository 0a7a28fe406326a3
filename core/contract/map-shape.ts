import type {
  ChainLink,
  CompiledMap,
  DegradedReason,
  MapCanary,
  Route,
  RouteShed,
  RouteWeight,
} from "./compiled-map.js";
import { isHeaderSafe } from "./header-safe.js";
import { attrsProblem } from "./market-attrs.js";
import { isPoolName } from "./pool-name.js";

/*
 * The Worker's check of a `routes` document: plain code, no zod, so the Worker bundle stays a
 * router's size. It accepts exactly what `CompiledMapSchema` (core/intent/map-schema.ts, used by the
 * pusher, edgectl and anti-entropy) accepts and builds the same routes; the shared case table
 * test/cases/map-shape-cases.ts holds both to that, in Node and in workerd. The pusher has
 * already validated intent in full; this only keeps a damaged or foreign document from routing.
 */

type Obj = Record<string, unknown>;

/** What JSON can give that `z.object` takes: an object, not `null`, not an array. */
function isObj(x: unknown): x is Obj {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** `z.number().int().nonnegative()`: a safe integer ≥ 0 (JSON's `1e400` is Infinity: refused). */
function isCount(x: unknown): x is number {
  return typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
}

/** A pool name: it lands in `X-Edge-Pool`, `X-Edge-Failover` and `X-Edge-Split`. */
function isName(x: unknown): x is string {
  return typeof x === "string" && x.length >= 1 && isHeaderSafe(x);
}

/** `source` lands in `X-Edge-Source`. */
function isSource(x: unknown): x is string {
  return typeof x === "string" && isHeaderSafe(x);
}

const TAB_OR_NEWLINE = /[\t\n\r]/g;

/** Checked origins of one document: a map names a handful of origins over hundreds of routes. */
type UrlMemo = Map<string, string | null>;

/**
 * `z.string().url()`: trimmed, the URL parser accepts it; the output is the trimmed text without
 * ASCII tabs and newlines (what zod returns), and it must be header-safe (`X-Edge-Origin`).
 * `null` when refused.
 */
function urlText(x: unknown, memo: UrlMemo): string | null {
  if (typeof x !== "string") return null;
  const known = memo.get(x);
  if (known !== undefined) return known;
  const trimmed = x.trim();
  let out: string | null;
  try {
    new URL(trimmed);
    out = trimmed.replace(TAB_OR_NEWLINE, "");
    if (!isHeaderSafe(out)) out = null;
  } catch {
    out = null;
  }
  memo.set(x, out);
  return out;
}

function linkOf(x: unknown, memo: UrlMemo): ChainLink | null {
  if (!isObj(x) || !isName(x.pool)) return null;
  const origin = urlText(x.origin, memo);
  return origin === null ? null : { pool: x.pool, origin };
}

const MAX_CHAIN = 16;

function chainOf(x: unknown, memo: UrlMemo): ChainLink[] | null {
  if (!Array.isArray(x) || x.length < 1 || x.length > MAX_CHAIN) return null;
  const out: ChainLink[] = [];
  for (const item of x) {
    const link = linkOf(item, memo);
    if (!link) return null;
    out.push(link);
  }
  return out;
}

/** Malformed weights make the route unweighted (its chain order), never reject the map. */
function weightsOf(x: unknown): RouteWeight[] | undefined {
  if (!Array.isArray(x) || x.length < 1 || x.length > MAX_CHAIN) return undefined;
  const out: RouteWeight[] = [];
  for (const item of x) {
    if (!isObj(item) || !isName(item.pool)) return undefined;
    const w = item.weight;
    if (typeof w !== "number" || !Number.isSafeInteger(w) || w < 1 || w > 1000) return undefined;
    out.push({ pool: item.pool, weight: w });
  }
  return out;
}

/** Malformed sheds are dropped (no `X-Edge-Shed`), never reject the map. */
function shedOf(x: unknown): RouteShed[] | undefined {
  if (!Array.isArray(x) || x.length < 1 || x.length > MAX_CHAIN) return undefined;
  const out: RouteShed[] = [];
  for (const item of x) {
    if (!isObj(item) || !isName(item.pool)) return undefined;
    const s = item.share;
    if (typeof s !== "number" || !Number.isSafeInteger(s) || s < 1 || s > 100) return undefined;
    if (item.by !== undefined && item.by !== "viewers") return undefined;
    out.push(item.by ? { pool: item.pool, share: s, by: item.by } : { pool: item.pool, share: s });
  }
  return out;
}

function isDegraded(x: unknown): x is DegradedReason | null {
  return (
    x === null ||
    x === "all-pools-unhealthy" ||
    x === "all-pools-slow" ||
    x === "no-default-rule" ||
    x === "fence-unsatisfiable"
  );
}

function routeOf(x: unknown, memo: UrlMemo): Route | null {
  if (!isObj(x) || !isName(x.pool)) return null;
  const origin = urlText(x.origin, memo);
  if (origin === null) return null;
  const chain = chainOf(x.chain, memo);
  if (!chain || !isSource(x.source) || !isDegraded(x.degraded)) return null;
  const weights = weightsOf(x.weights);
  const shed = shedOf(x.shed);
  const route: Route = { pool: x.pool, origin, chain, source: x.source, degraded: x.degraded };
  const weighted = weights ? { ...route, weights } : route;
  const withShed = shed ? { ...weighted, shed } : weighted;
  // The fence name becomes the X-Edge-Fence header: only a DNS label is taken.
  if (x.fence !== undefined && !(typeof x.fence === "string" && isPoolName(x.fence))) return null;
  if (x.degraded === "fence-unsatisfiable" && x.fence === undefined) return null;
  const fenced = typeof x.fence === "string" ? { ...withShed, fence: x.fence } : withShed;
  if (x.attrs === undefined) return fenced;
  const attrs = attrsOf(x.attrs);
  return attrs ? { ...fenced, attrs } : null;
}

/** Attributes become origin request headers: anything off the rules rejects the map. */
function attrsOf(x: unknown): Record<string, string> | null {
  if (!isObj(x)) return null;
  const out: Record<string, string> = {};
  for (const name of Object.keys(x)) {
    if (name === "__proto__") continue;
    const value = x[name];
    if (typeof value !== "string") return null;
    out[name] = value;
  }
  return attrsProblem(out) === null ? out : null;
}

/** `z.record(z.string(), route)`: every own enumerable key but `__proto__` (zod skips it). */
function countriesOf(x: unknown, memo: UrlMemo): Record<string, Route> | null {
  if (!isObj(x)) return null;
  const out: Record<string, Route> = {};
  for (const cc of Object.keys(x)) {
    if (cc === "__proto__") continue;
    const route = routeOf(x[cc], memo);
    if (!route) return null;
    out[cc] = route;
  }
  return out;
}

const CANARY_ID = /^c[0-9]{1,15}$/;

/**
 * The canary side (docs/reference.md §13), or `undefined` when absent or malformed: a damaged
 * canary sends every viewer by the stable routes, never rejects the map.
 */
function canaryOf(x: unknown, memo: UrlMemo): MapCanary | undefined {
  if (!isObj(x) || typeof x.id !== "string" || !CANARY_ID.test(x.id)) return undefined;
  const share = x.share;
  if (typeof share !== "number" || !Number.isSafeInteger(share) || share < 1 || share > 50)
    return undefined;
  const countries = countriesOf(x.countries, memo);
  if (!countries) return undefined;
  if (x.default === undefined) return { id: x.id, share, countries };
  const def = routeOf(x.default, memo);
  return def ? { id: x.id, share, default: def, countries } : undefined;
}

function isTextList(x: unknown): x is string[] {
  return Array.isArray(x) && x.every((p) => typeof p === "string");
}

/**
 * The compiled map in a parsed `routes` document, or `null` when it is not one: the structure
 * `CompiledMapSchema` requires, with every string that lands in a header header-safe, unknown
 * fields dropped, `history` 0 when absent, a malformed `canary` dropped. `kept`, `sheds` and
 * `viewer_sheds` are left out: only compile reads them, and a malformed one never rejected a map.
 */
export function mapShapeOf(raw: unknown): CompiledMap | null {
  if (!isObj(raw) || raw.v !== 1 || !isCount(raw.rev) || !isCount(raw.epoch)) return null;
  if (typeof raw.compiled_at !== "string") return null;
  const memo: UrlMemo = new Map();
  const def = routeOf(raw.default, memo);
  if (!def) return null;
  const countries = countriesOf(raw.countries, memo);
  if (!countries || !isTextList(raw.problems)) return null;
  const history = raw.history === undefined ? 0 : raw.history;
  if (!isCount(history)) return null;
  const canary = canaryOf(raw.canary, memo);
  return {
    v: 1,
    rev: raw.rev,
    epoch: raw.epoch,
    compiled_at: raw.compiled_at,
    default: def,
    countries,
    problems: [...raw.problems],
    history,
    ...(canary ? { canary } : {}),
  };
}

/** Parses a `routes` document for the Worker; `null` when it is not JSON or not a compiled map. */
export function parseMapShape(text: string): CompiledMap | null {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return null;
  }
  return mapShapeOf(raw);
}
