import type { CompiledMap, KeptRule, MapMeta, PoolShed, Route } from "../contract/compiled-map.js";
import type { Fence } from "../contract/fence.js";

function routeJson(r: Route): Route {
  return {
    pool: r.pool,
    origin: r.origin,
    chain: r.chain.map((c) => ({ pool: c.pool, origin: c.origin })),
    source: r.source,
    degraded: r.degraded,
    ...(r.weights && r.weights.length > 0
      ? { weights: r.weights.map((w) => ({ pool: w.pool, weight: w.weight })) }
      : {}),
    ...(r.shed && r.shed.length > 0
      ? {
          shed: r.shed.map((x) =>
            x.by ? { pool: x.pool, share: x.share, by: x.by } : { pool: x.pool, share: x.share },
          ),
        }
      : {}),
    ...attrsJson(r.attrs),
    ...(r.fence !== undefined ? { fence: r.fence } : {}),
  };
}

/** `{ attrs }` with the names sorted, or nothing when there are none. */
function attrsJson(attrs: Readonly<Record<string, string>> | undefined): {
  attrs?: Record<string, string>;
} {
  const names = attrs ? Object.keys(attrs).sort() : [];
  if (!attrs || names.length === 0) return {};
  const out: Record<string, string> = {};
  for (const name of names) out[name] = attrs[name] as string;
  return { attrs: out };
}

function shedsJson(sheds: CompiledMap["sheds"]): Record<string, PoolShed> | undefined {
  if (!sheds) return undefined;
  const out: Record<string, PoolShed> = {};
  for (const pool of Object.keys(sheds).sort()) {
    const s = sheds[pool];
    if (s)
      out[pool] =
        s.below_since === undefined
          ? { share: s.share, at: s.at }
          : { share: s.share, at: s.at, below_since: s.below_since };
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A kept rule as stable JSON: weights (when any) in the rule's pool order. */
/** Each country's viewer sheds, countries and pools sorted; `undefined` when there are none. */
function viewerShedsJson(
  byCountry: CompiledMap["viewer_sheds"],
): Record<string, Record<string, PoolShed>> | undefined {
  if (!byCountry) return undefined;
  const out: Record<string, Record<string, PoolShed>> = {};
  for (const cc of Object.keys(byCountry).sort()) {
    const sheds = shedsJson(byCountry[cc]);
    if (sheds) out[cc] = sheds;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function keptRuleJson(rule: KeptRule): KeptRule {
  const base = { primary: rule.primary, fallbacks: [...rule.fallbacks] };
  const w = rule.weights;
  if (!w || Object.keys(w).length === 0) return { ...base, ...attrsJson(rule.attrs) };
  const weights: Record<string, number> = {};
  for (const p of [rule.primary, ...rule.fallbacks]) {
    const v = w[p];
    if (v !== undefined) weights[p] = v;
  }
  return { ...base, weights, ...attrsJson(rule.attrs) };
}

function keptJson(kept: CompiledMap["kept"]): Record<string, KeptRule> | undefined {
  if (!kept) return undefined;
  const out: Record<string, KeptRule> = {};
  for (const cc of Object.keys(kept).sort()) {
    const rule = kept[cc];
    if (rule) out[cc] = keptRuleJson(rule);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** Each route's JSON ({@link routeJson}), kept while the route lives: routes are never mutated. */
const routeTexts = new WeakMap<Route, string>();

/**
 * A route as stable JSON, serialized once per route object: a map and its routing text (and a
 * pusher that carries unchanged routes over from the previous compile) share the work.
 */
export function routeText(route: Route): string {
  let text = routeTexts.get(route);
  if (text === undefined) {
    text = JSON.stringify(routeJson(route));
    routeTexts.set(route, text);
  }
  return text;
}

/** Each map's countries as JSON members, kept while the record lives: maps are never mutated. */
const countriesTexts = new WeakMap<CompiledMap["countries"], string>();

/**
 * `"CC":route,…` sorted by country, built once per countries record: the pusher serializes each
 * map twice (its routing text, then the value written), and both share the record.
 */
function countriesText(countries: CompiledMap["countries"]): string {
  let text = countriesTexts.get(countries);
  if (text === undefined) {
    const parts: string[] = [];
    for (const cc of Object.keys(countries).sort()) {
      const route = countries[cc];
      if (route) parts.push(`${JSON.stringify(cc)}:${routeText(route)}`);
    }
    text = parts.join(",");
    countriesTexts.set(countries, text);
  }
  return text;
}

/** `,"name":value` for a member JSON.stringify would write; nothing for one it would leave out. */
function member(name: string, value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? "" : `,"${name}":${text}`;
}

/**
 * Serializes a map as stable JSON: fixed key order, countries sorted, no whitespace; `kept`,
 * `sheds`, `viewer_sheds` and `fences` only when they have entries. Exactly `JSON.stringify` of the document in
 * that order, with each route's text taken from {@link routeText}.
 */
export function serializeMap(map: CompiledMap): string {
  return [
    `{"v":1${member("rev", map.rev)}${member("epoch", map.epoch)}`,
    member("compiled_at", map.compiled_at),
    `,"default":${routeText(map.default)},"countries":{${countriesText(map.countries)}}`,
    member("problems", [...map.problems]),
    member("history", map.history),
    member("kept", keptJson(map.kept)),
    member("sheds", shedsJson(map.sheds)),
    member("viewer_sheds", viewerShedsJson(map.viewer_sheds)),
    member("fences", fencesJson(map.fences)),
    canaryText(map.canary),
    "}",
  ].join("");
}

/** `,"canary":{…}` with its routes' texts, countries sorted; nothing without a canary. */
function canaryText(canary: CompiledMap["canary"]): string {
  if (!canary) return "";
  return [
    `,"canary":{${member("id", canary.id).slice(1)}${member("share", canary.share)}`,
    canary.default ? `,"default":${routeText(canary.default)}` : "",
    `,"countries":{${countriesText(canary.countries)}}}`,
  ].join("");
}

/** The fences by name, each value in its canonical field order; `undefined` when there are none. */
function fencesJson(fences: CompiledMap["fences"]): Record<string, Fence> | undefined {
  const names = fences ? Object.keys(fences).sort() : [];
  if (!fences || names.length === 0) return undefined;
  const out: Record<string, Fence> = {};
  for (const name of names) {
    const f = fences[name];
    if (f)
      out[name] = {
        countries: [...f.countries],
        continents: [...f.continents],
        regions: [...f.regions],
        floor: f.floor,
      };
  }
  return out;
}

/** Serializes `meta` with its fixed key order. */
export function serializeMeta(meta: MapMeta): string {
  return JSON.stringify({
    v: 1,
    rev: meta.rev,
    epoch: meta.epoch,
    heartbeat_at: meta.heartbeat_at,
    pusher: meta.pusher,
    countries: meta.countries,
    problems: [...meta.problems],
  });
}
