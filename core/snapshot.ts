import type { ContinentCode } from "./continents.js";
import { DEFAULT_CC } from "./countries.js";
import { parseKey } from "./keys.js";
import { type Problem, type ProblemCode, problem } from "./problem.js";
import {
  type CountryRule,
  CountryRuleSchema,
  EpochSchema,
  type Health,
  HealthSchema,
  joinPath,
  MAX_VALUE_BYTES,
  type OverrideRule,
  OverrideRuleSchema,
  type PoolDef,
  PoolDefSchema,
} from "./schema.js";
import { VALUE_FREE } from "./value-free-issue.js";
import type { ValueMemo } from "./value-memo.js";

/** One key/value read from etcd; `key` is the full key including the prefix. */
export interface SnapshotEntry {
  readonly key: string;
  readonly value: string | Uint8Array;
  /** etcd's `mod_revision` of the value, when known: lets a {@link ValueMemo} skip decoding. */
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
  readonly health: ReadonlyMap<string, Health>;
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

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

type Decoded<T> = { ok: true; value: T } | { ok: false; code: ProblemCode; message: string };

function decodeText(value: string | Uint8Array): Decoded<string> {
  const bytes = typeof value === "string" ? value.length * 3 : value.byteLength;
  if (bytes > MAX_VALUE_BYTES) {
    const size = typeof value === "string" ? new TextEncoder().encode(value).byteLength : bytes;
    if (size > MAX_VALUE_BYTES) {
      return { ok: false, code: "too-large", message: `value is ${size} bytes, over 64 KiB` };
    }
  }
  if (typeof value === "string") return { ok: true, value };
  try {
    return { ok: true, value: utf8.decode(value) };
  } catch {
    return { ok: false, code: "not-utf8", message: "value is not UTF-8 text" };
  }
}

function decodeJson<T>(
  value: string | Uint8Array,
  schema: {
    safeParse(
      x: unknown,
      params: typeof VALUE_FREE,
    ): {
      success: boolean;
      data?: T;
      error?: { issues: { path: PropertyKey[]; message: string }[] };
    };
  },
): Decoded<T> {
  const text = decodeText(value);
  if (!text.ok) return text;
  let raw: unknown;
  try {
    raw = JSON.parse(text.value);
  } catch {
    // JSON.parse's own message quotes the text: never shown (SPEC §3.6).
    return { ok: false, code: "invalid-json", message: "invalid JSON" };
  }
  const parsed = schema.safeParse(raw, VALUE_FREE);
  if (parsed.success) return { ok: true, value: parsed.data as T };
  const issues = parsed.error?.issues ?? [];
  const message = issues
    .map((i) => (i.path.length ? `${joinPath("", i.path)}: ${i.message}` : i.message))
    .join("; ");
  return { ok: false, code: "invalid-value", message };
}

/**
 * Decodes and validates every entry under `prefix`. Invalid values are dropped and reported;
 * unknown keys are reported and ignored. Never throws. With a `memo`, entries that carry a
 * `modRevision` already decoded in an earlier pass are not decoded again.
 */
export function readSnapshot(snapshot: Snapshot, prefix: string, memo?: ValueMemo): RoutingState {
  const countries = new Map<string, CountryRule>();
  const overrides = new Map<string, OverrideRule>();
  const pools = new Map<string, PoolDef>();
  const health = new Map<string, Health>();
  const invalidCountries = new Set<string>();
  const invalidOverrides = new Set<string>();
  const problems: Problem[] = [];
  const continents = new Map<ContinentCode, CountryRule>();
  const invalidContinents = new Set<ContinentCode>();
  const continentOverrides = new Map<ContinentCode, ContinentOverride>();
  let epoch = 0;
  const report = (key: string, code: ProblemCode, message: string) =>
    problems.push(problem(key, code, message));

  const entries = [...snapshot.entries].sort((a, b) =>
    a.key < b.key ? -1 : a.key > b.key ? 1 : 0,
  );
  for (const { key, value, modRevision } of entries) {
    if (!key.startsWith(prefix)) continue;
    const rel = key.slice(prefix.length);
    const parsed = parseKey(rel);
    const decode = <T>(k: string, run: () => Decoded<T>): Decoded<T> =>
      memo ? memo.get(k, modRevision, run) : run();
    switch (parsed.kind) {
      case "unknown":
        report(rel, "unknown-key", "unknown key, ignored");
        break;
      case "invalid":
        report(rel, "invalid-key", parsed.reason);
        break;
      case "lock":
        break;
      case "epoch": {
        const text = decodeText(value);
        const r = text.ok ? EpochSchema.safeParse(text.value.trim()) : null;
        if (r?.success) epoch = r.data;
        else report(rel, "invalid-epoch", text.ok ? "must be a decimal integer" : text.message);
        break;
      }
      case "country": {
        const r = decode(key, () => decodeJson<CountryRule>(value, CountryRuleSchema));
        if (r.ok) countries.set(parsed.cc, r.value);
        else {
          invalidCountries.add(parsed.cc);
          report(rel, r.code, r.message);
        }
        break;
      }
      case "override": {
        const r = decode(key, () => decodeJson<OverrideRule>(value, OverrideRuleSchema));
        if (r.ok) overrides.set(parsed.cc, r.value);
        else {
          invalidOverrides.add(parsed.cc);
          report(rel, r.code, r.message);
        }
        break;
      }
      case "continent": {
        const r = decode(key, () => decodeJson<CountryRule>(value, CountryRuleSchema));
        if (r.ok) continents.set(parsed.continent, r.value);
        else {
          invalidContinents.add(parsed.continent);
          report(rel, r.code, r.message);
        }
        break;
      }
      case "continent-override": {
        // Sorted keys: `override/continent/K` comes after `override/K` and wins over it.
        const r = decode(key, () => decodeJson<OverrideRule>(value, OverrideRuleSchema));
        if (r.ok) continentOverrides.set(parsed.continent, { key: rel, rule: r.value });
        else report(rel, r.code, r.message);
        break;
      }
      case "pool": {
        const r = decode(key, () => decodeJson<PoolDef>(value, PoolDefSchema));
        if (r.ok) pools.set(parsed.pool, r.value);
        else report(rel, r.code, r.message);
        break;
      }
      case "health": {
        const r = decode(key, () => decodeJson<Health>(value, HealthSchema));
        if (r.ok) health.set(parsed.pool, r.value);
        else report(rel, r.code, `${r.message} (pool treated as unhealthy)`);
        break;
      }
    }
  }
  memo?.endPass();
  if (!countries.has(DEFAULT_CC) && !invalidCountries.has(DEFAULT_CC)) {
    report(`country/${DEFAULT_CC}`, "missing-default", "required rule is missing");
  }
  return {
    countries,
    overrides,
    pools,
    health,
    epoch,
    invalidCountries,
    invalidOverrides,
    problems,
    continents,
    invalidContinents,
    continentOverrides,
  };
}
