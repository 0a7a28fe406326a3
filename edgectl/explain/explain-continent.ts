import {
  type CompileOptions,
  type ContinentCode,
  compile,
  countriesOf,
  DEFAULT_CC,
  formatProblem,
  type Route,
  resolveRoute,
  type Snapshot,
  safeText,
} from "../../core/index.js";
import type { ExplainedRule } from "./explained-rule.js";
import { formatShares, type PoolShare, routeShares } from "./route-shares.js";

/** What a continent's rule does right now: the `edgectl explain EU` answer. */
export interface ContinentExplanation {
  readonly continent: ContinentCode;
  readonly revision: number;
  readonly epoch: number;
  /** The key whose rule covers the continent (`override/EU`, `continent/EU`), or null. */
  readonly ruleKey: string | null;
  readonly rule: ExplainedRule | null;
  /** The compiled route of the countries it covers (null when it covers none). */
  readonly route: Route | null;
  /** The countries the continent's rule routes (no usable rule of their own), sorted. */
  readonly covers: readonly string[];
  /** The continent's countries routed by a rule of their own (`country/CC`, `override/CC`). */
  readonly ownRule: readonly string[];
  /** The continent's countries that follow `_default` (no rule covers them). */
  readonly followsDefault: readonly string[];
  readonly split: readonly PoolShare[];
  readonly reasons: readonly string[];
  readonly problems: readonly string[];
}

/**
 * Compiles the snapshot as the pusher does and explains continent `k`: which rule covers it
 * (its live override, else `continent/K`), the route its countries get, and which of its
 * countries it covers, which have a rule of their own and which follow `_default`.
 */
export function explainContinent(
  snapshot: Snapshot,
  k: ContinentCode,
  opts: CompileOptions,
): ContinentExplanation {
  const { map, problems, state } = compile(snapshot, opts);
  const override = state.continentOverrides.get(k);
  const keys = new Set([`continent/${k}`, ...(override ? [override.key] : [])]);
  const covers: string[] = [];
  const ownRule: string[] = [];
  const followsDefault: string[] = [];
  let route: Route | null = null;
  for (const cc of countriesOf(k)) {
    const r = resolveRoute(map, cc);
    if (!Object.hasOwn(map.countries, cc)) followsDefault.push(cc);
    else if (keys.has(r.source) || (r.source === "floor" && !ownsRule(state, cc))) {
      covers.push(cc);
      route ??= r;
    } else ownRule.push(cc);
  }
  const ruleKey = route && route.source !== "floor" ? route.source : ruleKeyOf(state, k);
  const raw =
    ruleKey?.startsWith("override/") && override
      ? override.rule
      : ruleKey
        ? state.continents.get(k)
        : undefined;
  const reasons: string[] = [];
  const mine = problems.filter(
    (p) => p.key === `continent/${k}` || (override && p.key === override.key),
  );
  for (const p of mine) reasons.push(safeText(`${p.key} is not usable (${p.message}): ignored`));
  if (ruleKey === null) reasons.push(`no usable continent/${k} or override: ${k} follows _default`);
  else if (ruleKey.startsWith("override/"))
    reasons.push(`${ruleKey} is active and replaces continent/${k}`);
  if (covers.length > 0)
    reasons.push(`${ruleKey} routes ${covers.length} countries without a usable rule of their own`);
  if (ownRule.length > 0)
    reasons.push(`${ownRule.length} countries have a rule of their own, which comes first`);
  if (route?.weights) reasons.push(`weighted split: ${formatShares(route)} of viewers`);
  if (route?.degraded === "all-pools-unhealthy")
    reasons.push(`every pool of the chain is unhealthy: floor pool ${route.pool}`);
  if (route?.shed)
    reasons.push(
      `slow pools shed viewers to the next pools of the chain: ${route.shed.map((x) => `${x.pool} ${x.share} %`).join(", ")} (edgectl explain CC says why)`,
    );
  if (route?.degraded === "all-pools-slow")
    reasons.push(
      "every pool of the chain is fully shed: nothing is shed, the route keeps its chain",
    );
  return {
    continent: k,
    revision: snapshot.revision,
    epoch: state.epoch,
    ruleKey,
    rule: raw
      ? {
          primary: raw.primary,
          fallbacks: [...raw.fallbacks],
          ...(raw.weights ? { weights: { ...raw.weights } } : {}),
          ...("reason" in raw && typeof raw.reason === "string"
            ? { reason: safeText(raw.reason, 80) }
            : {}),
        }
      : null,
    route,
    covers,
    ownRule,
    followsDefault,
    split: route ? routeShares(route) : [],
    reasons,
    problems: mine.map(formatProblem),
  };
}

type State = ReturnType<typeof compile>["state"];

const ownsRule = (state: State, cc: string) =>
  state.countries.has(cc) || state.overrides.has(cc) || cc === DEFAULT_CC;

function ruleKeyOf(state: State, k: ContinentCode): string | null {
  const o = state.continentOverrides.get(k);
  if (o) return o.key;
  return state.continents.has(k) ? `continent/${k}` : null;
}
