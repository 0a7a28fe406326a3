import { z } from "zod";
import { DEFAULT_CC, isRuleTarget } from "./countries.js";
import { isPoolName, routingKeys } from "./keys.js";
import type { Problem } from "./problem.js";
import {
  type CountryRule,
  CountryRuleSchema,
  joinPath,
  MAX_VALUE_BYTES,
  type PoolDef,
  PoolDefSchema,
} from "./schema.js";

/** A desired-state file: every pool and every country rule the operator wants. */
export interface DesiredState {
  readonly pools: Readonly<Record<string, PoolDef>>;
  readonly countries: Readonly<Record<string, CountryRule>>;
}

const FileSchema = z
  .object({
    pools: z.record(z.string(), PoolDefSchema),
    countries: z.record(z.string(), CountryRuleSchema),
  })
  .strict();

/** Result of validating a parsed desired-state document. */
export type DesiredStateResult =
  | { readonly ok: true; readonly state: DesiredState }
  | { readonly ok: false; readonly problems: readonly Problem[] };

/**
 * Validates a whole desired-state document (already parsed from YAML or JSON): shapes, names,
 * dangling pool references, the required `_default`, and value sizes. Problems name their path,
 * e.g. `countries.DE.fallbacks[1]: unknown pool "fra-9"`.
 */
export function validateDesiredState(doc: unknown): DesiredStateResult {
  const problems: Problem[] = [];
  const add = (key: string, code: Problem["code"], message: string) =>
    problems.push({ key, code, message });
  if (doc === null || typeof doc !== "object" || Array.isArray(doc)) {
    add("(file)", "invalid-value", "must be a mapping with `pools` and `countries`");
    return { ok: false, problems };
  }
  const parsed = FileSchema.safeParse(doc);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      add(joinPath("", issue.path) || "(file)", "invalid-value", issue.message);
    }
    return { ok: false, problems };
  }
  const { pools, countries } = parsed.data;
  for (const name of Object.keys(pools)) {
    if (!isPoolName(name))
      add(`pools.${name}`, "invalid-key", "not a valid pool name (a DNS label)");
  }
  for (const [cc, rule] of Object.entries(countries)) {
    if (!isRuleTarget(cc)) {
      add(`countries.${cc}`, "invalid-key", "not an ISO 3166-1 alpha-2 code or _default");
      continue;
    }
    const refs: [string, string][] = [
      [`countries.${cc}.primary`, rule.primary],
      ...rule.fallbacks.map((p, i): [string, string] => [`countries.${cc}.fallbacks[${i}]`, p]),
    ];
    for (const [path, pool] of refs) {
      if (!Object.hasOwn(pools, pool)) add(path, "dangling-reference", `unknown pool "${pool}"`);
    }
    if (JSON.stringify(rule).length > MAX_VALUE_BYTES)
      add(`countries.${cc}`, "too-large", "over 64 KiB");
  }
  if (!Object.hasOwn(countries, DEFAULT_CC)) {
    add(`countries.${DEFAULT_CC}`, "missing-default", "required rule is missing");
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, state: { pools, countries } };
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
    if (r) out.set(k.country(cc), canonicalRule(r));
  }
  return out;
}

/** Canonical JSON of a pool definition (fixed key order). */
export function canonicalPool(p: PoolDef): string {
  return JSON.stringify(
    p.region === undefined ? { origin: p.origin } : { origin: p.origin, region: p.region },
  );
}

/** Canonical JSON of a country rule (fixed key order). */
export function canonicalRule(r: CountryRule): string {
  return JSON.stringify({ primary: r.primary, fallbacks: [...r.fallbacks] });
}

/** Builds the desired state held by a decoded routing state (for `edgectl export`). */
export function desiredStateFromRouting(state: {
  readonly pools: ReadonlyMap<string, PoolDef>;
  readonly countries: ReadonlyMap<string, CountryRule>;
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
  return { pools, countries };
}
