import {
  type CountryRule,
  continentOf,
  DEFAULT_CC,
  MAX_FALLBACKS,
  type RoutingState,
  type RuleTarget,
} from "../../core/index.js";
import { CliError } from "../cli/cli-error.js";

/** A percent boost's rule: the target's current rule, weighted `{primary: 100−N, P: N}`. */
export interface PercentBoostRule {
  readonly primary: string;
  readonly fallbacks: readonly string[];
  readonly weights: Readonly<Record<string, number>>;
  /** The key the rule was taken from (`country/DE`, `continent/EU`, `country/_default`). */
  readonly base: string;
}

/** `--percent`: a whole number from 1 to 99. */
export function parsePercent(raw: string): number {
  if (!/^\d{1,2}$/.test(raw.trim()) || Number(raw) < 1 || Number(raw) > 99)
    throw new CliError("invalid-input", `--percent: "${raw}" is not a whole number from 1 to 99`);
  return Number(raw);
}

/** The rule the target follows without any override: its own, its continent's, or _default's. */
export function currentRule(
  state: RoutingState,
  target: RuleTarget,
): [string, CountryRule] | undefined {
  const keys: [string, CountryRule | undefined][] = [];
  if (target.kind === "country") {
    keys.push([`country/${target.cc}`, state.countries.get(target.cc)]);
    const k = continentOf(target.cc);
    if (k) keys.push([`continent/${k}`, state.continents.get(k)]);
  } else keys.push([`continent/${target.continent}`, state.continents.get(target.continent)]);
  keys.push([`country/${DEFAULT_CC}`, state.countries.get(DEFAULT_CC)]);
  for (const [key, rule] of keys) if (rule) return [key, rule];
  return undefined;
}

/**
 * Shifts `percent` % of the target's viewers to `pool` (docs/reference.md §6): the current rule's chain, with
 * `pool` appended as the last fallback when the rule does not name it, weighted
 * `{primary: 100 − percent, pool: percent}`.
 */
export function percentBoostRule(
  state: RoutingState,
  target: RuleTarget,
  pool: string,
  percent: number,
): PercentBoostRule {
  const current = currentRule(state, target);
  if (!current)
    throw new CliError(
      "invalid-input",
      "--percent needs a current rule to split, and there is none",
    );
  const [base, rule] = current;
  if (rule.primary === pool)
    throw new CliError(
      "invalid-input",
      `--percent: ${pool} is already the primary of ${base}; use --pool without --percent`,
    );
  const fallbacks = rule.fallbacks.includes(pool) ? [...rule.fallbacks] : [...rule.fallbacks, pool];
  if (fallbacks.length > MAX_FALLBACKS)
    throw new CliError(
      "invalid-input",
      `--percent: ${base} already has ${MAX_FALLBACKS} fallbacks`,
    );
  return {
    primary: rule.primary,
    fallbacks,
    weights: { [rule.primary]: 100 - percent, [pool]: percent },
    base,
  };
}
