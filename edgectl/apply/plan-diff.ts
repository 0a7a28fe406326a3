import type { PrefixEntry, PrefixRead } from "../../adapters/prefix-read.js";
import {
  CountryRuleSchema,
  canonicalFence,
  canonicalPool,
  canonicalRule,
  type DesiredState,
  desiredStateToKeys,
  escapeUnsafe,
  FenceSchema,
  PoolDefSchema,
  parseBoundedJson,
  safeText,
  utf8Length,
} from "../../core/index.js";

/** One intent key `apply` would write or delete. */
export interface KeyChange {
  readonly kind: "add" | "change" | "remove";
  /** The full etcd key. */
  readonly key: string;
  /** The key relative to the prefix. */
  readonly rel: string;
  readonly before?: string;
  readonly after?: string;
}

/** Only these families are intent: overrides, health, epoch and the lock are never touched. */
export function isIntentKey(rel: string): boolean {
  return (
    rel.startsWith("pool/") ||
    rel.startsWith("country/") ||
    rel.startsWith("continent/") ||
    rel.startsWith("fence/")
  );
}

/**
 * The stored value in canonical form when it parses, so key order alone is not a change. Text
 * too large or too deep to be valid is compared as it is.
 */
function canonicalStored(e: PrefixEntry): string {
  const text = e.value.toString("utf8");
  const parsed = parseBoundedJson(text);
  if (!parsed.ok) return text;
  const raw = parsed.value;
  if (e.rel.startsWith("pool/")) {
    const p = PoolDefSchema.safeParse(raw);
    if (p.success) return canonicalPool(p.data);
  } else if (e.rel.startsWith("fence/")) {
    const f = FenceSchema.safeParse(raw);
    if (f.success) return canonicalFence(f.data);
  } else {
    const r = CountryRuleSchema.safeParse(raw);
    if (r.success) return canonicalRule(r.data);
  }
  return text;
}

/**
 * The changes that turn the intent keys under `prefix` into `desired`: added and changed keys
 * get the canonical value, intent keys the file does not name are removed. Sorted by key.
 */
export function diffIntent(
  current: PrefixRead,
  desired: DesiredState,
  prefix: string,
): KeyChange[] {
  const want = desiredStateToKeys(desired, prefix);
  const changes: KeyChange[] = [];
  const seen = new Set<string>();
  for (const e of current.entries) {
    if (!isIntentKey(e.rel)) continue;
    seen.add(e.key);
    const after = want.get(e.key);
    const before = e.value.toString("utf8");
    if (after === undefined) changes.push({ kind: "remove", key: e.key, rel: e.rel, before });
    else if (canonicalStored(e) !== after)
      changes.push({ kind: "change", key: e.key, rel: e.rel, before, after });
  }
  for (const [key, after] of want) {
    if (!seen.has(key)) changes.push({ kind: "add", key, rel: key.slice(prefix.length), after });
  }
  return changes.sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/**
 * Most characters of a value a plan line shows: more than any rule or pool can hold (a rule at
 * every limit is about 2,700). A longer value (a fence listing hundreds of regions, or etcd text
 * written by hand) shows its start and its size; `plan -o json` has it whole.
 */
export const MAX_PLAN_VALUE_CHARS = 4096;

/** Most characters of a key a plan line shows (intent keys are short; a junk key need not be). */
export const MAX_PLAN_KEY_CHARS = 256;

/** A value as a plan line shows it: escaped, and cut to {@link MAX_PLAN_VALUE_CHARS} with its size. */
export function planValueText(text: string): string {
  if (text.length <= MAX_PLAN_VALUE_CHARS) {
    const escaped = escapeUnsafe(text);
    if (escaped.length <= MAX_PLAN_VALUE_CHARS) return escaped;
  }
  return `${safeText(text, MAX_PLAN_VALUE_CHARS)} (${utf8Length(text)} bytes)`;
}

/**
 * Renders changes as `+ key value`, `~ key before → after`, `- key (was …)` lines. Keys and
 * values are etcd's (or the file's) raw text: control and invisible characters are escaped
 * (`\u001b`), newlines too, so a value can neither drive the terminal nor fake a line, and a
 * value is cut to {@link MAX_PLAN_VALUE_CHARS} (`planValueText`).
 */
export function formatDiff(changes: readonly KeyChange[]): string[] {
  if (changes.length === 0) return ["No changes: etcd already holds this intent."];
  const counts = { add: 0, change: 0, remove: 0 };
  const lines: string[] = [];
  for (const c of changes) {
    counts[c.kind]++;
    const rel = safeText(c.rel, MAX_PLAN_KEY_CHARS);
    const before = planValueText(c.before ?? "");
    const after = planValueText(c.after ?? "");
    if (c.kind === "add") lines.push(`  + ${rel}  ${after}`);
    else if (c.kind === "change") lines.push(`  ~ ${rel}  ${before} → ${after}`);
    else lines.push(`  - ${rel}  (was ${before})`);
  }
  return [
    `Intent changes: ${counts.add} to add, ${counts.change} to change, ${counts.remove} to remove`,
    ...lines,
  ];
}
