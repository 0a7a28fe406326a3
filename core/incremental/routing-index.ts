import type { ContinentCode } from "../contract/continents.js";
import { DEFAULT_CC } from "../contract/countries.js";
import type { Fence } from "../contract/fence.js";
import type { CanaryJudgement } from "../intent/canary-judgement-schema.js";
import type { Canary } from "../intent/canary-schema.js";
import { type ParsedKey, parseKey } from "../intent/keys.js";
import type { Observed } from "../intent/observed-schema.js";
import { type Problem, problem } from "../intent/problem.js";
import type { RoutingState, SnapshotEntry } from "../intent/routing-state.js";
import type { CountryRule, Health, OverrideRule, PoolDef } from "../intent/schema.js";
import { decodeFor, problemOf } from "../intent/value-decode.js";
import { ContinentOverrideKeys } from "./continent-override-keys.js";
import { CopyOnWrite } from "./copy-on-write.js";
import { PoolCheckers } from "./pool-checkers.js";

/**
 * One key as the index holds it: decoded once per `mod_revision`, never its bytes. `value` is
 * the valid decoded value, `undefined` when the value is invalid or the key holds none (the
 * fewer objects a key costs, the larger a prefix fits the pusher's heap).
 */
interface KeyRecord {
  readonly rev: number | undefined;
  readonly parsed: ParsedKey;
  readonly value: unknown;
  readonly problem: Problem | null;
}

const byKey = <V>(a: [string, V], b: [string, V]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
const sortedMap = <K extends string, V>(m: ReadonlyMap<K, V>) =>
  new Map([...m].sort(byKey) as [K, V][]);
const sortedSet = <K extends string>(s: ReadonlySet<K>) => new Set([...s].sort());

/**
 * The decoded routing state of a prefix, kept up to date key by key: a put or delete costs the
 * decoding of that one key, and {@link state} hands out the same {@link RoutingState} that
 * decoding every key afresh gives (`decodeSnapshot` is built on it). Within one etcd history a
 * key's value at a given `mod_revision` never changes, so a key whose revision is unchanged is
 * not decoded again; the owner must {@link clear} the index when the history changes.
 */
export class RoutingIndex {
  private readonly records = new Map<string, KeyRecord>();
  private countries = new Map<string, CountryRule>();
  private overrides = new Map<string, OverrideRule>();
  private readonly pools = new CopyOnWrite<string, PoolDef>();
  /** Live checkers' reports by pool, and each pool's judgement. */
  private readonly checkers = new PoolCheckers();
  private invalidCountries = new Set<string>();
  private invalidOverrides = new Set<string>();
  private continents = new Map<ContinentCode, CountryRule>();
  private invalidContinents = new Set<ContinentCode>();
  private readonly continentOverrides = new ContinentOverrideKeys();
  private fences = new Map<string, Fence>();
  private invalidFences = new Set<string>();
  /** Valid observations by country, then pool. */
  private observed = new Map<string, Map<string, Observed>>();
  private problems = new Map<string, Problem>();
  private canary: Canary | undefined;
  private canaryJudgement: CanaryJudgement | undefined;
  private epochKey: string | null = null;
  private epoch = 0;
  private newest = 0;
  private newestStale = false;
  /** A predecessor's records, whose decoding a full read may reuse (see {@link successor}). */
  private reuse: ReadonlyMap<string, KeyRecord> | null = null;

  constructor(private readonly prefix: string) {}

  /**
   * An empty index for a full read of the same etcd history, filled key by key with `upsert`:
   * a key whose `mod_revision` is unchanged takes this index's decoding instead of decoding
   * again. {@link seal} it when the read is complete.
   */
  successor(): RoutingIndex {
    const next = new RoutingIndex(this.prefix);
    next.reuse = this.records;
    return next;
  }

  /** Lets go of the predecessor's records (the full read is complete). */
  seal(): void {
    this.reuse = null;
  }

  /** Keys under the prefix the index holds (lock and unknown keys included). */
  get size(): number {
    return this.records.size;
  }

  /** Whether the index holds `key` (a full key, prefix included). */
  has(key: string): boolean {
    return this.records.has(key);
  }

  /** The newest `mod_revision` among the keys held (0 when empty or unknown). */
  get newestModRevision(): number {
    if (this.newestStale) {
      this.newest = 0;
      for (const r of this.records.values()) this.newest = Math.max(this.newest, r.rev ?? 0);
      this.newestStale = false;
    }
    return this.newest;
  }

  /** Sets one key to its value at `modRevision` (decoded again only if the revision moved). */
  upsert(entry: SnapshotEntry): void {
    if (!entry.key.startsWith(this.prefix)) return;
    const old = this.records.get(entry.key);
    if (old && entry.modRevision !== undefined && old.rev === entry.modRevision) return;
    if (old) this.withdraw(entry.key, old);
    const prior = old ? undefined : this.reuse?.get(entry.key);
    if (prior && entry.modRevision !== undefined && prior.rev === entry.modRevision) {
      this.records.set(entry.key, prior);
      this.contribute(entry.key, prior);
      this.newest = Math.max(this.newest, entry.modRevision);
      return;
    }
    const rel = entry.key.slice(this.prefix.length);
    const parsed = old?.parsed ?? parseKey(rel);
    const decoded = decodeFor(parsed, entry.value);
    const record: KeyRecord = {
      rev: entry.modRevision,
      parsed,
      value: decoded?.ok ? decoded.value : undefined,
      problem: problemOf(rel, parsed, decoded),
    };
    this.records.set(entry.key, record);
    this.contribute(entry.key, record);
    this.newest = Math.max(this.newest, entry.modRevision ?? 0);
  }

  /** Removes one key; false when the index did not hold it. */
  delete(key: string): boolean {
    const old = this.records.get(key);
    if (!old) return false;
    this.records.delete(key);
    this.withdraw(key, old);
    if ((old.rev ?? 0) >= this.newest) this.newestStale = true;
    return true;
  }

  /**
   * Replaces the whole content with a full read's entries, reusing the decoding of every key
   * whose `mod_revision` is unchanged.
   */
  reset(entries: Iterable<SnapshotEntry>): void {
    const kept = new Map(this.records);
    this.clear();
    this.reuse = kept;
    for (const entry of entries) this.upsert(entry);
    this.reuse = null;
  }

  /** Forgets everything (a new etcd history: revisions may repeat there). */
  clear(): void {
    this.records.clear();
    this.reuse = null;
    this.countries = new Map();
    this.overrides = new Map();
    this.pools.clear();
    this.checkers.clear();
    this.invalidCountries = new Set();
    this.invalidOverrides = new Set();
    this.continents = new Map();
    this.invalidContinents = new Set();
    this.continentOverrides.clear();
    this.fences = new Map();
    this.invalidFences = new Set();
    this.observed = new Map();
    this.problems = new Map();
    this.canary = undefined;
    this.canaryJudgement = undefined;
    this.epochKey = null;
    this.epoch = 0;
    this.newest = 0;
    this.newestStale = false;
  }

  /** The routing state of what the index holds: fresh collections, which later changes leave alone. */
  state(): RoutingState {
    const problems = [...this.problems.values()];
    if (!this.countries.has(DEFAULT_CC) && !this.invalidCountries.has(DEFAULT_CC)) {
      problems.push(
        problem(`country/${DEFAULT_CC}`, "missing-default", "required rule is missing"),
      );
    }
    const pools = this.pools.share();
    return {
      countries: sortedMap(this.countries),
      overrides: sortedMap(this.overrides),
      pools,
      health: this.checkers.judge((pool) => pools.get(pool)?.quorum),
      epoch: this.epoch,
      invalidCountries: sortedSet(this.invalidCountries),
      invalidOverrides: sortedSet(this.invalidOverrides),
      problems,
      continents: sortedMap(this.continents),
      invalidContinents: sortedSet(this.invalidContinents),
      continentOverrides: this.continentOverrides.resolved(),
      fences: sortedMap(this.fences),
      invalidFences: sortedSet(this.invalidFences),
      observed: new Map(
        [...this.observed].sort(byKey).map(([cc, byPool]) => [cc, sortedMap(byPool)]),
      ),
      ...(this.canary ? { canary: this.canary } : {}),
      ...(this.canaryJudgement ? { canaryJudgement: this.canaryJudgement } : {}),
    };
  }

  private contribute(key: string, r: KeyRecord): void {
    if (r.problem) this.problems.set(key, r.problem);
    const v = r.value;
    const ok = v !== undefined;
    const p = r.parsed;
    switch (p.kind) {
      case "epoch":
        this.epochKey = key;
        this.epoch = ok ? (v as number) : 0;
        break;
      case "country":
        if (ok) this.countries.set(p.cc, v as CountryRule);
        else this.invalidCountries.add(p.cc);
        break;
      case "override":
        if (ok) this.overrides.set(p.cc, v as OverrideRule);
        else this.invalidOverrides.add(p.cc);
        break;
      case "continent":
        if (ok) this.continents.set(p.continent, v as CountryRule);
        else this.invalidContinents.add(p.continent);
        break;
      case "continent-override":
        if (ok)
          this.continentOverrides.set(
            p.continent,
            key.slice(this.prefix.length),
            v as OverrideRule,
          );
        break;
      case "pool":
        if (ok) this.pools.write.set(p.pool, v as PoolDef);
        break;
      case "health":
        if (ok) this.checkers.set(p.pool, p.checker, v as Health);
        break;
      case "fence":
        if (ok) this.fences.set(p.name, v as Fence);
        else this.invalidFences.add(p.name);
        break;
      case "observed":
        if (ok) {
          const byPool = this.observed.get(p.cc) ?? new Map<string, Observed>();
          byPool.set(p.pool, v as Observed);
          this.observed.set(p.cc, byPool);
        }
        break;
      case "canary":
        this.canary = ok ? (v as Canary) : undefined;
        break;
      case "canary-judgement":
        this.canaryJudgement = ok ? (v as CanaryJudgement) : undefined;
        break;
    }
  }

  private withdraw(key: string, r: KeyRecord): void {
    this.problems.delete(key);
    const p = r.parsed;
    switch (p.kind) {
      case "epoch":
        if (this.epochKey === key) {
          this.epochKey = null;
          this.epoch = 0;
        }
        break;
      case "country":
        this.countries.delete(p.cc);
        this.invalidCountries.delete(p.cc);
        break;
      case "override":
        this.overrides.delete(p.cc);
        this.invalidOverrides.delete(p.cc);
        break;
      case "continent":
        this.continents.delete(p.continent);
        this.invalidContinents.delete(p.continent);
        break;
      case "continent-override":
        this.continentOverrides.delete(p.continent, key.slice(this.prefix.length));
        break;
      case "pool":
        if (this.pools.read.has(p.pool)) this.pools.write.delete(p.pool);
        break;
      case "health":
        this.checkers.delete(p.pool, p.checker);
        break;
      case "fence":
        this.fences.delete(p.name);
        this.invalidFences.delete(p.name);
        break;
      case "observed": {
        const byPool = this.observed.get(p.cc);
        byPool?.delete(p.pool);
        if (byPool?.size === 0) this.observed.delete(p.cc);
        break;
      }
      case "canary":
        this.canary = undefined;
        break;
      case "canary-judgement":
        this.canaryJudgement = undefined;
        break;
    }
  }
}
