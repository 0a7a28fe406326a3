import type { ContinentCode } from "./continents.js";
import type { PoolHealth } from "./pool-health.js";
import type { Problem } from "./problem.js";
import { RoutingIndex } from "./routing-index.js";
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
}

/** A valid continent override and the key it was read from (relative to the prefix). */
export interface ContinentOverride {
  readonly key: string;
  readonly rule: OverrideRule;
}

/**
 * Decodes and validates every entry under `prefix`. Invalid values are dropped and reported;
 * unknown keys are reported and ignored. Never throws. (The pusher keeps a {@link RoutingIndex}
 * instead, which decodes only the keys that changed.)
 */
export function readSnapshot(snapshot: Snapshot, prefix: string): RoutingState {
  const index = new RoutingIndex(prefix);
  index.reset([...snapshot.entries].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0)));
  return index.state();
}
