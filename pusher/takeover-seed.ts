import {
  type CompiledMap,
  DEFAULT_CC,
  type KeptRule,
  lastValidContinentRule,
  lastValidRule,
  withoutFallClocks,
} from "../core/index.js";
import { isAfter } from "./kv-view.js";

const CONTINENT = "continent/";

/** The last valid rule `map` knows for `key` (`DE`, `_default` or `continent/EU`). */
function lastValid(map: CompiledMap, key: string): KeptRule | undefined {
  return key.startsWith(CONTINENT)
    ? lastValidContinentRule(map, key.slice(CONTINENT.length))
    : lastValidRule(map, key);
}

/** Every key whose last valid rule `map` may know. */
function ruleKeys(map: CompiledMap): Set<string> {
  const keys = new Set([DEFAULT_CC, ...Object.keys(map.countries), ...Object.keys(map.kept ?? {})]);
  for (const route of Object.values(map.countries)) {
    if (route.source.startsWith(CONTINENT)) keys.add(route.source);
  }
  return keys;
}

/**
 * The map the next compile takes its last valid rules from (docs/reference.md §3.4) when a pusher becomes the
 * writer: `own`, its newest compile from etcd, and `inKv`, what it just read from KV, which may
 * be a stale copy (KV serves reads up to about 60 s old). Etcd's truth comes first: a KV map
 * ordered after `own` (another leader saw more) replaces it; an older one only fills in the
 * rules `own` knows nothing of (a rule invalid since before this process started, whose last
 * valid form only KV remembers). So a stale copy never brings back a rule this pusher saw replaced.
 * Shed shares step from what the edge serves (§9): KV's, of the same history, unless `own`
 * agrees with it (a standby compiles from no previous map, so its shares follow the p90 with no
 * hysteresis). A shed's fall clock (`below_since`) is never taken from KV (`withoutFallClocks`).
 */
export function takeoverSeed(
  own: CompiledMap | null,
  inKv: CompiledMap | null,
): CompiledMap | null {
  if (!inKv) return own;
  if (!own || isAfter(inKv, own)) return withoutFallClocks(inKv);
  const extra: Record<string, KeptRule> = {};
  for (const key of ruleKeys(inKv)) {
    if (lastValid(own, key)) continue;
    const theirs = lastValid(inKv, key);
    if (theirs) extra[key] = theirs;
  }
  const sheds = inKv.history === own.history ? servedSheds(own, inKv) : own.sheds;
  if (Object.keys(extra).length === 0 && sheds === own.sheds) return own;
  const { sheds: _, ...rest } = own;
  return {
    ...rest,
    ...(Object.keys(extra).length > 0 ? { kept: { ...extra, ...own.kept } } : {}),
    ...(sheds ? { sheds } : {}),
  };
}

/** KV's sheds without their fall clocks, or `own`'s (the same object) when it serves the same. */
function servedSheds(own: CompiledMap, inKv: CompiledMap): CompiledMap["sheds"] {
  const theirs = withoutFallClocks(inKv).sheds ?? {};
  const mine = own.sheds ?? {};
  const pools = new Set([...Object.keys(theirs), ...Object.keys(mine)]);
  const same = [...pools].every(
    (p) => theirs[p]?.share === mine[p]?.share && theirs[p]?.at === mine[p]?.at,
  );
  if (same) return own.sheds;
  return Object.keys(theirs).length > 0 ? theirs : undefined;
}
