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
 * A shed's fall clock (`below_since`) is never taken from KV (`withoutFallClocks`).
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
  if (Object.keys(extra).length === 0) return own;
  return { ...own, kept: { ...extra, ...own.kept } };
}
