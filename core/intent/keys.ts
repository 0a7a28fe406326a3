import { type ContinentCode, isContinentCode } from "../contract/continents.js";
import { isCountryCode, isRuleTarget } from "../contract/countries.js";
import { isPoolName } from "../contract/pool-name.js";
import { CANARY_JUDGEMENT_KEY } from "./canary-judgement-schema.js";
import { parseRuleTarget } from "./rule-target.js";

/** The key of the running canary, relative to the prefix (docs/reference.md §13). */
export const CANARY_KEY = "canary/current";

/** Default etcd prefix of the v1 routing schema. */
export const DEFAULT_PREFIX = "/edge/routing/v1/";

/** True for a checker name (`health/{pool}/{checker}`): a DNS label, like a pool name. */
export function isCheckerName(name: string): boolean {
  return isPoolName(name);
}

/** A key under the routing prefix, parsed. `invalid` keys match a known family but have a bad name. */
export type ParsedKey =
  | { readonly kind: "country"; readonly cc: string }
  | { readonly kind: "override"; readonly cc: string }
  | { readonly kind: "continent"; readonly continent: ContinentCode }
  /** `override/{K}` (`AN`, `EU`, `OC`) or `override/continent/{K}` (any continent). */
  | { readonly kind: "continent-override"; readonly continent: ContinentCode }
  | { readonly kind: "pool"; readonly pool: string }
  /** `health/{pool}` (`checker` absent: the pool's plain key, one checker) or `health/{pool}/{checker}`. */
  | { readonly kind: "health"; readonly pool: string; readonly checker?: string }
  /** `observed/{CC}/{pool}`: what the country's viewers of the pool got (docs/reference.md §12). */
  | { readonly kind: "observed"; readonly cc: string; readonly pool: string }
  /** `fence/{name}` (docs/reference.md §10); the name is a DNS label. */
  | { readonly kind: "fence"; readonly name: string }
  /** `canary/current`: the routing change being tried on a share of viewers (docs/reference.md §13). */
  | { readonly kind: "canary" }
  /** `canary/judgement`: the observer's judgement of the running canary's gates (§13). */
  | { readonly kind: "canary-judgement" }
  | { readonly kind: "epoch" }
  | { readonly kind: "lock" }
  | { readonly kind: "invalid"; readonly reason: string }
  | { readonly kind: "unknown" };

/** Parses a key relative to the routing prefix (e.g. `country/DE`). */
export function parseKey(rel: string): ParsedKey {
  if (rel === "epoch") return { kind: "epoch" };
  if (rel === "lock/apply") return { kind: "lock" };
  if (rel === CANARY_KEY) return { kind: "canary" };
  if (rel === CANARY_JUDGEMENT_KEY) return { kind: "canary-judgement" };
  const slash = rel.indexOf("/");
  if (slash < 0) return { kind: "unknown" };
  const family = rel.slice(0, slash);
  const name = rel.slice(slash + 1);
  switch (family) {
    case "country":
      if (isRuleTarget(name)) return { kind: family, cc: name };
      return isContinentCode(name)
        ? { kind: "invalid", reason: "a continent code: continent rules live under continent/" }
        : { kind: "invalid", reason: "not an ISO 3166-1 alpha-2 code" };
    case "override": {
      const target = parseRuleTarget(name);
      if (!target)
        return { kind: "invalid", reason: "not an ISO 3166-1 alpha-2 or continent code" };
      return target.kind === "country"
        ? { kind: "override", cc: target.cc }
        : { kind: "continent-override", continent: target.continent };
    }
    case "continent":
      return isContinentCode(name)
        ? { kind: "continent", continent: name }
        : { kind: "invalid", reason: "not a continent code (AF AN AS EU NA OC SA)" };
    case "health": {
      const [pool = "", checker, ...rest] = name.split("/");
      if (!isPoolName(pool))
        return { kind: "invalid", reason: "not a valid pool name (a DNS label)" };
      if (checker === undefined) return { kind: family, pool };
      return rest.length === 0 && isCheckerName(checker)
        ? { kind: family, pool, checker }
        : { kind: "invalid", reason: "not a valid checker name (a DNS label)" };
    }
    case "pool":
      return isPoolName(name)
        ? { kind: family, pool: name }
        : { kind: "invalid", reason: "not a valid pool name (a DNS label)" };
    case "observed": {
      const [cc = "", pool, ...rest] = name.split("/");
      if (!isCountryCode(cc))
        return { kind: "invalid", reason: "not an ISO 3166-1 alpha-2 code (or XX, T1)" };
      return pool !== undefined && rest.length === 0 && isPoolName(pool)
        ? { kind: family, cc, pool }
        : { kind: "invalid", reason: "not a valid pool name (a DNS label)" };
    }
    case "fence":
      return isPoolName(name)
        ? { kind: "fence", name }
        : { kind: "invalid", reason: "not a valid fence name (a DNS label)" };
    default:
      return { kind: "unknown" };
  }
}

/** Builds the etcd keys for one prefix. */
export function routingKeys(prefix: string) {
  return {
    country: (cc: string) => `${prefix}country/${cc}`,
    /** `cc` may be any target name, e.g. `DE`, `EU` or `continent/NA`. */
    override: (cc: string) => `${prefix}override/${cc}`,
    continent: (k: string) => `${prefix}continent/${k}`,
    pool: (pool: string) => `${prefix}pool/${pool}`,
    /** The pool's plain health key, or one checker's (`health/{pool}/{checker}`). */
    health: (pool: string, checker?: string) =>
      checker === undefined ? `${prefix}health/${pool}` : `${prefix}health/${pool}/${checker}`,
    fence: (name: string) => `${prefix}fence/${name}`,
    /** What one country's viewers of one pool got (`edgectl observe`). */
    observed: (cc: string, pool: string) => `${prefix}observed/${cc}/${pool}`,
    /** The prefix of every observation. */
    observedPrefix: `${prefix}observed/`,
    epoch: `${prefix}epoch`,
    lock: `${prefix}lock/apply`,
    canary: `${prefix}${CANARY_KEY}`,
    canaryJudgement: `${prefix}${CANARY_JUDGEMENT_KEY}`,
  } as const;
}
