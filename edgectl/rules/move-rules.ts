import type { PrefixRead } from "../../adapters/prefix-read.js";
import { liveOverride } from "../../core/compile/continent-rules.js";
import {
  CountryRuleSchema,
  canonicalRule,
  decodeSnapshot,
  MAX_FALLBACKS,
  type RoutingState,
  type RuleTarget,
  ruleTargetName,
} from "../../core/index.js";
import type { KeyChange } from "../apply/plan-diff.js";
import { CliError } from "../cli/cli-error.js";
import { toSnapshot } from "../etcd/read-prefix.js";
import { currentRule } from "./percent-boost.js";

/** What `move` would write, and what the operator should know about it. */
export interface MovePlan {
  readonly changes: KeyChange[];
  /** One line per thing the plan does not show by itself (dropped weights, live overrides). */
  readonly notes: string[];
}

/** The intent key of a target's own rule, relative to the prefix. */
export function ruleKey(target: RuleTarget): string {
  return target.kind === "country" ? `country/${target.cc}` : `continent/${target.continent}`;
}

function ownRule(state: RoutingState, target: RuleTarget) {
  return target.kind === "country"
    ? state.countries.get(target.cc)
    : state.continents.get(target.continent);
}

function liveOverrideOf(state: RoutingState, target: RuleTarget, now: Date) {
  if (target.kind === "country") {
    const rule = liveOverride(state.overrides.get(target.cc), now);
    return rule ? { key: `override/${target.cc}`, rule } : undefined;
  }
  const o = state.continentOverrides.get(target.continent);
  const rule = liveOverride(o?.rule, now);
  return o && rule ? { key: o.key, rule } : undefined;
}

function assertPool(state: RoutingState, pool: string, flag: string): void {
  if (!state.pools.has(pool))
    throw new CliError("unknown-pool", `${flag}: pool "${pool}" has no pool/ definition`);
}

/**
 * The seeds' rebalance (docs/reference.md §6 `move`): each target's own rule (`country/CC` or `continent/K`)
 * becomes `{primary: pool}` with `fallbacks` when given, else the rule it follows now (its own,
 * its continent's or `_default`'s) with the old primary first and `pool` taken out, cut to 8.
 * The new rule carries no weights: a move sends all of the target's viewers to `pool` (a weighted
 * rule's weights are dropped, and a note says so). Targets already so are left out.
 */
export function moveChanges(
  read: PrefixRead,
  prefix: string,
  targets: readonly RuleTarget[],
  pool: string,
  fallbacks: readonly string[] | undefined,
  now: Date = new Date(),
): MovePlan {
  const state = decodeSnapshot(toSnapshot(read), prefix);
  assertPool(state, pool, "--to");
  for (const p of fallbacks ?? []) assertPool(state, p, "--fallbacks");
  const changes: KeyChange[] = [];
  const notes: string[] = [];
  const seen = new Set<string>();
  for (const target of targets) {
    const rel = ruleKey(target);
    if (seen.has(rel)) continue;
    seen.add(rel);
    const name = ruleTargetName(target);
    const followed = currentRule(state, target);
    let chain = fallbacks ? [...fallbacks] : [];
    if (!fallbacks && followed) {
      const [, old] = followed;
      chain = [...new Set([old.primary, ...old.fallbacks])].filter((p) => p !== pool);
      if (chain.length > MAX_FALLBACKS) {
        notes.push(
          `note: ${rel} keeps the first ${MAX_FALLBACKS} fallbacks (dropped: ${chain.slice(MAX_FALLBACKS).join(", ")})`,
        );
        chain = chain.slice(0, MAX_FALLBACKS);
      }
    }
    const parsed = CountryRuleSchema.safeParse({ primary: pool, fallbacks: chain });
    if (!parsed.success) {
      throw new CliError(
        "invalid-input",
        `cannot move ${name} to ${pool}`,
        parsed.error.issues.map((i) => `${rel}.${i.path.join(".")}: ${i.message}`),
      );
    }
    if (followed?.[1].weights) {
      const w = Object.entries(followed[1].weights)
        .map(([p, n]) => `${p} ${n}`)
        .join(", ");
      notes.push(
        `note: ${rel} is written without weights (${followed[0]} had ${w}): all of ${name}'s viewers go to ${pool}`,
      );
    }
    const override = liveOverrideOf(state, target, now);
    if (override) {
      notes.push(
        `note: ${override.key} (until ${override.rule.expires_at ?? "its lease ends"}) still wins over ${rel} (edgectl unboost ${name})`,
      );
    }
    const after = canonicalRule(parsed.data);
    const own = ownRule(state, target);
    if (own && canonicalRule(own) === after) continue;
    const entry = read.entries.find((e) => e.rel === rel);
    changes.push(
      entry
        ? { kind: "change", key: entry.key, rel, before: entry.value.toString("utf8"), after }
        : { kind: "add", key: `${prefix}${rel}`, rel, after },
    );
  }
  changes.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
  return { changes, notes };
}
