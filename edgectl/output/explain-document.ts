import type { PoolViewers } from "../explain/country-viewers.js";
import type { ContinentExplanation } from "../explain/explain-continent.js";
import type { Explanation } from "../explain/explain-country.js";
import type { ExplainResult } from "./shapes/explain-shape.js";

/** A country explanation as `-o json` shows it (`ExplainCountryShape`). */
export function countryDocument(
  x: Explanation,
  viewers: readonly PoolViewers[] = [],
): ExplainResult {
  return {
    kind: "country",
    country: x.country,
    revision: x.revision,
    epoch: x.epoch,
    rule_key: x.ruleKey,
    rule: x.rule ? { ...x.rule, fallbacks: [...x.rule.fallbacks] } : null,
    chain: x.chain.map((l) => ({
      pool: l.pool,
      defined: l.defined,
      health: l.health,
      origin: l.origin,
      takes_traffic: l.takesTraffic,
      report: { ...l.report, slow_ms: l.report.slow_ms ? { ...l.report.slow_ms } : null },
    })),
    route: x.route as Extract<ExplainResult, { kind: "country" }>["route"],
    source: x.source,
    split: [...x.split],
    reasons: [...x.reasons],
    problems: [...x.problems],
    fence: x.fence
      ? { ...x.fence, regions: [...x.fence.regions], removed: [...x.fence.removed] }
      : null,
    viewers: viewers.map((v) => ({ ...v })),
  };
}

/** A continent explanation as `-o json` shows it (`ExplainContinentShape`). */
export function continentDocument(x: ContinentExplanation): ExplainResult {
  return {
    kind: "continent",
    continent: x.continent,
    revision: x.revision,
    epoch: x.epoch,
    rule_key: x.ruleKey,
    rule: x.rule ? { ...x.rule, fallbacks: [...x.rule.fallbacks] } : null,
    route: x.route as Extract<ExplainResult, { kind: "continent" }>["route"],
    source: x.route?.source ?? null,
    covers: [...x.covers],
    own_rule: [...x.ownRule],
    follows_default: [...x.followsDefault],
    split: [...x.split],
    reasons: [...x.reasons],
    problems: [...x.problems],
  };
}
