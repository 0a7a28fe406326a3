import { z } from "zod";
import type { ContinentCode } from "../contract/continents.js";
import { DEFAULT_CC } from "../contract/countries.js";
import type { Fence } from "../contract/fence.js";
import { mergeAttrs } from "../contract/market-attrs.js";
import { isPoolName } from "../contract/pool-name.js";
import { FenceSchema } from "./fence-schema.js";
import { issueProblemCode } from "./issue-problem-code.js";
import { routingKeys } from "./keys.js";
import { type Problem, problem } from "./problem.js";
import { parseRuleTarget, ruleTargetName } from "./rule-target.js";
import {
  type CountryRule,
  CountryRuleSchema,
  joinPath,
  MAX_VALUE_BYTES,
  type PoolDef,
  PoolDefSchema,
} from "./schema.js";
import { VALUE_FREE } from "./value-free-issue.js";

/**
 * A desired-state file: every pool and every country rule the operator wants. `countries` keys
 * may be continents too (`EU`, `continent/NA`: see `parseRuleTarget`), stored as `continent/K`.
 */
export interface DesiredState {
  readonly pools: Readonly<Record<string, PoolDef>>;
  readonly countries: Readonly<Record<string, CountryRule>>;
  /** `fence/{name}` values by name (docs/reference.md §10); absent or empty: no fence. */
  readonly fences?: Readonly<Record<string, Fence>>;
}

const TopSchema = z
  .object({
    pools: z.record(z.string(), z.unknown()),
    countries: z.record(z.string(), z.unknown()),
    fences: z.record(z.string(), z.unknown()).optional(),
  })
  .strict();

/** Result of validating a parsed desired-state document. */
export type DesiredStateResult =
  | { readonly ok: true; readonly state: DesiredState }
  | { readonly ok: false; readonly problems: readonly Problem[] };

const byteLength = (text: string) => new TextEncoder().encode(text).byteLength;

/**
 * Validates a whole desired-state document (already parsed from YAML or JSON) and reports every
 * problem, not just the first: shapes, names, dangling pool references, the required `_default`,
 * and value sizes. Problems name their path, e.g. `countries.DE.fallbacks[1]: unknown pool "fra-9"`.
 */
export function validateDesiredState(doc: unknown): DesiredStateResult {
  const problems: Problem[] = [];
  // Keys come from the file and may be any junk: problem() escapes and cuts them.
  const add = (key: string, code: Problem["code"], message: string) =>
    problems.push(problem(key, code, message));
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    add("(file)", "invalid-value", "must be a mapping with `pools` and `countries`");
    return { ok: false, problems };
  }
  const top = TopSchema.safeParse(doc, VALUE_FREE);
  if (!top.success) {
    for (const issue of top.error.issues) {
      add(joinPath("", issue.path) || "(file)", "invalid-value", issue.message);
    }
    return { ok: false, problems };
  }
  // zod's records drop a `__proto__` key in silence: the document's own keys are walked, so one
  // is refused as the invalid name it is.
  const given = doc as { pools: object; countries: object; fences?: object };
  const pools: Record<string, PoolDef> = {};
  for (const [name, raw] of Object.entries(given.pools)) {
    const key = `pools.${name}`;
    if (!isPoolName(name)) add(key, "invalid-key", "not a valid pool name (a DNS label)");
    const r = PoolDefSchema.safeParse(raw, VALUE_FREE);
    if (!r.success) {
      for (const issue of r.error.issues)
        add(joinPath(key, issue.path), issueProblemCode(issue), issue.message);
      continue;
    }
    if (byteLength(canonicalPool(r.data)) > MAX_VALUE_BYTES) add(key, "too-large", "over 64 KiB");
    if (r.data.viewers === true && r.data.slow_ms === undefined)
      add(`${key}.viewers`, "invalid-value", "needs slow_ms: the watermarks viewers shed by");
    pools[name] = r.data;
  }
  const countries: Record<string, CountryRule> = {};
  const continentsSeen = new Set<string>();
  for (const [cc, raw] of Object.entries(given.countries)) {
    const key = `countries.${cc}`;
    const target = parseRuleTarget(cc);
    if (!target)
      add(key, "invalid-key", "not an ISO 3166-1 alpha-2 code, a continent code or _default");
    else if (target.kind === "continent") {
      if (continentsSeen.has(target.continent))
        add(key, "invalid-key", "names a continent another key already names");
      continentsSeen.add(target.continent);
    }
    const r = CountryRuleSchema.safeParse(raw, VALUE_FREE);
    if (!r.success) {
      for (const issue of r.error.issues)
        add(joinPath(key, issue.path), "invalid-value", issue.message);
      continue;
    }
    const rule = r.data;
    const refs: [string, string][] = [
      [`${key}.primary`, rule.primary],
      ...rule.fallbacks.map((p, i): [string, string] => [`${key}.fallbacks[${i}]`, p]),
    ];
    for (const [path, pool] of refs) {
      if (!Object.hasOwn(top.data.pools, pool)) {
        add(path, "dangling-reference", `unknown pool "${pool}"`);
      }
    }
    if (byteLength(canonicalRule(rule)) > MAX_VALUE_BYTES) add(key, "too-large", "over 64 KiB");
    countries[cc] = rule;
  }
  if (!Object.hasOwn(top.data.countries, DEFAULT_CC)) {
    add(`countries.${DEFAULT_CC}`, "missing-default", "required rule is missing");
  }
  const fences: Record<string, Fence> = {};
  for (const [name, raw] of Object.entries(given.fences ?? {})) {
    const key = `fences.${name}`;
    if (!isPoolName(name)) add(key, "invalid-key", "not a valid fence name (a DNS label)");
    const r = FenceSchema.safeParse(raw, VALUE_FREE);
    if (!r.success) {
      for (const issue of r.error.issues)
        add(joinPath(key, issue.path), "invalid-value", issue.message);
      continue;
    }
    if (!Object.hasOwn(top.data.pools, r.data.floor))
      add(`${key}.floor`, "dangling-reference", `unknown pool "${r.data.floor}"`);
    if (byteLength(canonicalFence(r.data)) > MAX_VALUE_BYTES) add(key, "too-large", "over 64 KiB");
    fences[name] = r.data;
  }
  if (problems.length > 0) return { ok: false, problems };
  const fenced = Object.keys(fences).length > 0 ? { fences } : {};
  return { ok: true, state: { pools, countries, ...fenced } };
}

/** The etcd key/values (full keys) that represent a desired state; values are canonical JSON. */
export function desiredStateToKeys(state: DesiredState, prefix: string): Map<string, string> {
  const k = routingKeys(prefix);
  const out = new Map<string, string>();
  for (const name of Object.keys(state.pools).sort()) {
    const p = state.pools[name];
    if (p) out.set(k.pool(name), canonicalPool(p));
  }
  for (const cc of Object.keys(state.countries).sort()) {
    const r = state.countries[cc];
    const target = parseRuleTarget(cc);
    if (!r || !target) continue;
    out.set(
      target.kind === "continent" ? k.continent(target.continent) : k.country(target.cc),
      canonicalRule(r),
    );
  }
  for (const name of Object.keys(state.fences ?? {}).sort()) {
    const f = state.fences?.[name];
    if (f) out.set(k.fence(name), canonicalFence(f));
  }
  return out;
}

/** Canonical JSON of a fence (fixed key order, lists as given). */
export function canonicalFence(f: Fence): string {
  return JSON.stringify({
    countries: [...f.countries],
    continents: [...f.continents],
    regions: [...f.regions],
    floor: f.floor,
  });
}

/** Canonical JSON of a pool definition (fixed key order: origin, region, quorum, slow_ms, viewers). */
export function canonicalPool(p: PoolDef): string {
  return JSON.stringify({
    origin: p.origin,
    ...(p.region === undefined ? {} : { region: p.region }),
    ...(p.quorum === undefined ? {} : { quorum: p.quorum }),
    ...(p.slow_ms === undefined ? {} : { slow_ms: { low: p.slow_ms.low, high: p.slow_ms.high } }),
    ...(p.viewers === undefined ? {} : { viewers: p.viewers }),
  });
}

/**
 * Canonical JSON of a country rule (fixed key order; weights, when given, in pool order; attrs,
 * when given, by name).
 */
export function canonicalRule(r: CountryRule): string {
  const base = { primary: r.primary, fallbacks: [...r.fallbacks] };
  const attrs = mergeAttrs(r.attrs);
  const tail = attrs ? { attrs } : {};
  const w = r.weights;
  if (!w) return JSON.stringify({ ...base, ...tail });
  const weights: Record<string, number> = {};
  for (const p of [r.primary, ...r.fallbacks]) {
    const v = Object.hasOwn(w, p) ? w[p] : undefined;
    if (v !== undefined) weights[p] = v;
  }
  return JSON.stringify({ ...base, weights, ...tail });
}

/** Builds the desired state held by a decoded routing state (for `edgectl export`). */
export function desiredStateFromRouting(state: {
  readonly pools: ReadonlyMap<string, PoolDef>;
  readonly countries: ReadonlyMap<string, CountryRule>;
  readonly continents?: ReadonlyMap<ContinentCode, CountryRule>;
  readonly fences?: ReadonlyMap<string, Fence>;
}): DesiredState {
  const pools: Record<string, PoolDef> = {};
  for (const name of [...state.pools.keys()].sort()) {
    const p = state.pools.get(name);
    if (p) pools[name] = p;
  }
  const countries: Record<string, CountryRule> = {};
  const ccs = [...state.countries.keys()].sort((a, b) =>
    a === DEFAULT_CC ? -1 : b === DEFAULT_CC ? 1 : a < b ? -1 : 1,
  );
  for (const cc of ccs) {
    const r = state.countries.get(cc);
    if (r) countries[cc] = r;
  }
  for (const k of [...(state.continents?.keys() ?? [])].sort()) {
    const r = state.continents?.get(k);
    if (r) countries[ruleTargetName({ kind: "continent", continent: k })] = r;
  }
  const fences: Record<string, Fence> = {};
  for (const name of [...(state.fences?.keys() ?? [])].sort()) {
    const f = state.fences?.get(name);
    if (f) fences[name] = f;
  }
  return { pools, countries, ...(Object.keys(fences).length > 0 ? { fences } : {}) };
}
