import type { CompiledMap, KeptRule } from "../contract/compiled-map.js";
import { DEFAULT_CC } from "../contract/countries.js";
import { isAfter } from "../contract/map-order.js";
import type { CarriedState } from "./carried-state.js";
import { lastValidContinentRule, lastValidRule } from "./last-valid-rule.js";
import { withoutFallClocks } from "./shed-share.js";

/**
 * The maps a process has to carry state from: `own`, its own newest compile from etcd (the
 * pusher's memory), and `kv`, the map it read from KV (after a restart or a takeover, and what
 * `explain` and `status` start from). Either may be missing; with neither, nothing is carried
 * (the edge-effect compile of `plan` and `apply`).
 */
export interface CarriedFrom {
  readonly own?: CompiledMap | null;
  readonly kv?: CompiledMap | null;
}

/**
 * The state the next compile carries, from what the process has. Etcd's truth comes first: a KV
 * map ordered after `own` (another leader saw more) replaces it; an older one only fills in the
 * last valid rules `own` knows nothing of (a rule invalid since before this process started,
 * whose last valid form only KV remembers), so a stale KV copy never brings back a rule `own`
 * saw replaced. Shed shares step from what the edge serves (§9): KV's, of the same history,
 * unless `own` agrees with it, and so do countries' viewer sheds. A shed's fall clock (`below_since`) is never taken from KV: KV's
 * `routes` is not rewritten when only the clock moves, so its copy may be older than the p90's
 * last rise (dropping it can only delay a step down).
 */
export function carriedState(from: CarriedFrom): CarriedState | null {
  return takeoverSeed(from.own ?? null, from.kv ?? null);
}

/**
 * {@link carriedState} as one map: `own` itself when KV adds nothing (the same object, so the
 * pusher's write economy and route memo see no change), KV's when it is newer.
 */
export function takeoverSeed(own: CompiledMap | null, kv: CompiledMap | null): CompiledMap | null {
  if (!kv) return own;
  return own && !isAfter(kv, own) ? merged(own, kv) : withoutFallClocks(kv);
}

const CONTINENT = "continent/";

/** The last valid rule `map` knows for `key` (`DE`, `_default` or `continent/EU`). */
function lastValid(map: CarriedState, key: string): KeptRule | undefined {
  return key.startsWith(CONTINENT)
    ? lastValidContinentRule(map, key.slice(CONTINENT.length))
    : lastValidRule(map, key);
}

/** Every key whose last valid rule `map` may know. */
function ruleKeys(map: CarriedState): Set<string> {
  const keys = new Set([DEFAULT_CC, ...Object.keys(map.countries), ...Object.keys(map.kept ?? {})]);
  for (const route of Object.values(map.countries)) {
    if (route.source.startsWith(CONTINENT)) keys.add(route.source);
  }
  return keys;
}

/** `own`, with the last valid rules only `kv` knows and the sheds the edge serves. */
function merged(own: CompiledMap, kv: CompiledMap): CompiledMap {
  const extra: Record<string, KeptRule> = {};
  for (const key of ruleKeys(kv)) {
    if (lastValid(own, key)) continue;
    const theirs = lastValid(kv, key);
    if (theirs) extra[key] = theirs;
  }
  const sameHistory = kv.history === own.history;
  const served = withoutFallClocks(kv);
  const sheds = sameHistory ? servedSheds(own.sheds, served.sheds) : own.sheds;
  const viewers = sameHistory ? servedViewerSheds(own, served) : own.viewer_sheds;
  const changed = sheds !== own.sheds || viewers !== own.viewer_sheds;
  if (Object.keys(extra).length === 0 && !changed) return own;
  const { sheds: _, viewer_sheds: __, ...rest } = own;
  return {
    ...rest,
    ...(Object.keys(extra).length > 0 ? { kept: { ...extra, ...own.kept } } : {}),
    ...(sheds ? { sheds } : {}),
    ...(viewers ? { viewer_sheds: viewers } : {}),
  };
}

type Sheds = CompiledMap["sheds"];

/** KV's sheds (already without fall clocks), or `mine` (the same object) when it serves the same. */
function servedSheds(mine: Sheds, theirs: Sheds): Sheds {
  const a = theirs ?? {};
  const b = mine ?? {};
  const pools = new Set([...Object.keys(a), ...Object.keys(b)]);
  const same = [...pools].every((p) => a[p]?.share === b[p]?.share && a[p]?.at === b[p]?.at);
  if (same) return mine;
  return Object.keys(a).length > 0 ? a : undefined;
}

/** {@link servedSheds} of every country's viewer sheds: `own`'s object when all are the same. */
function servedViewerSheds(own: CompiledMap, served: CompiledMap): CompiledMap["viewer_sheds"] {
  const theirs = served.viewer_sheds ?? {};
  const mine = own.viewer_sheds ?? {};
  const out: Record<string, NonNullable<Sheds>> = {};
  let same = true;
  for (const cc of new Set([...Object.keys(theirs), ...Object.keys(mine)])) {
    const a = Object.hasOwn(mine, cc) ? mine[cc] : undefined;
    const b = Object.hasOwn(theirs, cc) ? theirs[cc] : undefined;
    const sheds = servedSheds(a, b);
    if (sheds !== a) same = false;
    if (sheds) out[cc] = sheds;
  }
  if (same) return own.viewer_sheds;
  return Object.keys(out).length > 0 ? out : undefined;
}
