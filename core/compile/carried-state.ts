import type { CompiledMap, KeptRule } from "../contract/compiled-map.js";
import { DEFAULT_CC } from "../contract/countries.js";
import { isAfter } from "../contract/map-order.js";
import { lastValidContinentRule, lastValidRule } from "./last-valid-rule.js";
import { withoutFallClocks } from "./shed-share.js";

/**
 * Everything a compile carries forward from an earlier one, and nothing else of an earlier map
 * (docs/reference.md §3.4):
 * - `default` and `countries`: the earlier routes. A route the compile makes again is handed out
 *   as the earlier object (so the pusher sees routing unchanged), and a route that shows its rule
 *   whole is that rule's last valid form.
 * - `kept`: the last valid rules no route shows whole (§3.4).
 * - `sheds`: each shedding pool's share, when it last stepped, and since when its p90 has been
 *   below the fall watermark (§9).
 * - `fences`: the last valid value of each fence, so a damaged `fence/` value never lifts it (§10).
 *
 * A compiled map is one (it carries exactly these); {@link carriedState} builds one from the
 * maps a process has.
 */
export type CarriedState = Pick<CompiledMap, "default" | "countries" | "kept" | "sheds" | "fences">;

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
 * unless `own` agrees with it. A shed's fall clock (`below_since`) is never taken from KV: KV's
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
  const sheds = kv.history === own.history ? servedSheds(own, kv) : own.sheds;
  if (Object.keys(extra).length === 0 && sheds === own.sheds) return own;
  const { sheds: _, ...rest } = own;
  return {
    ...rest,
    ...(Object.keys(extra).length > 0 ? { kept: { ...extra, ...own.kept } } : {}),
    ...(sheds ? { sheds } : {}),
  };
}

/** KV's sheds without their fall clocks, or `own`'s (the same object) when it serves the same. */
function servedSheds(own: CompiledMap, kv: CompiledMap): CompiledMap["sheds"] {
  const theirs = withoutFallClocks(kv).sheds ?? {};
  const mine = own.sheds ?? {};
  const pools = new Set([...Object.keys(theirs), ...Object.keys(mine)]);
  const same = [...pools].every(
    (p) => theirs[p]?.share === mine[p]?.share && theirs[p]?.at === mine[p]?.at,
  );
  if (same) return own.sheds;
  return Object.keys(theirs).length > 0 ? theirs : undefined;
}
