import type { ContinentCode } from "../contract/continents.js";
import type { Fence } from "../contract/fence.js";
import type { CanaryJudgement } from "./canary-judgement-schema.js";
import type { Canary } from "./canary-schema.js";
import type { Observed } from "./observed-schema.js";
import type { PoolHealth } from "./pool-health.js";
import type { Problem } from "./problem.js";
import type { CountryRule, OverrideRule, PoolDef } from "./schema.js";

/** One key/value read from etcd; `key` is the full key including the prefix. */
export interface SnapshotEntry {
  readonly key: string;
  readonly value: string | Uint8Array;
  /** etcd's `mod_revision` of the value, when known: lets a {@link RoutingIndex} skip decoding. */
  readonly modRevision?: number;
}

/** Every key under the prefix at one etcd revision. */
export interface Snapshot {
  readonly revision: number;
  readonly entries: readonly SnapshotEntry[];
}

/** The routing state decoded from a snapshot: only valid values, plus what was wrong. */
export interface RoutingState {
  readonly countries: ReadonlyMap<string, CountryRule>;
  readonly overrides: ReadonlyMap<string, OverrideRule>;
  readonly pools: ReadonlyMap<string, PoolDef>;
  /** Pools with at least one live checker, as their checkers judge them (§9). */
  readonly health: ReadonlyMap<string, PoolHealth>;
  readonly epoch: number;
  /** Countries (or `_default`) whose `country/` key exists but is invalid. */
  readonly invalidCountries: ReadonlySet<string>;
  /** Countries whose `override/` key exists but is invalid. */
  readonly invalidOverrides: ReadonlySet<string>;
  readonly problems: readonly Problem[];
  /** `continent/{K}` rules. */
  readonly continents: ReadonlyMap<ContinentCode, CountryRule>;
  /** Continents whose `continent/` key exists but is invalid. */
  readonly invalidContinents: ReadonlySet<ContinentCode>;
  /** Continent overrides, with the key that holds each (`override/EU`, `override/continent/NA`). */
  readonly continentOverrides: ReadonlyMap<ContinentCode, ContinentOverride>;
  /** Valid `fence/{name}` values by name, sorted (docs/reference.md §10). */
  readonly fences: ReadonlyMap<string, Fence>;
  /** Fences whose `fence/` key exists but is invalid. */
  readonly invalidFences: ReadonlySet<string>;
  /**
   * Valid `observed/{CC}/{pool}` values (what the country's viewers of the pool got, §12), keyed
   * by country and then pool, both sorted.
   */
  readonly observed: ReadonlyMap<string, ReadonlyMap<string, Observed>>;
  /** The running canary (`canary/current`, docs/reference.md §13); absent when none or invalid. */
  readonly canary?: Canary;
  /** The observer's judgement of it (`canary/judgement`, §13); absent when none or invalid. */
  readonly canaryJudgement?: CanaryJudgement;
}

/** A valid continent override and the key it was read from (relative to the prefix). */
export interface ContinentOverride {
  readonly key: string;
  readonly rule: OverrideRule;
}
