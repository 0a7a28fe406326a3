import type { EtcdMembers } from "../../adapters/etcd-members.js";
import type { PrefixRead } from "../../adapters/prefix-read.js";
import { CANARY_KEY, parseBoundedJson, safeText } from "../../core/index.js";
import {
  oldestAuditEpoch,
  readAuditRecordsAfter,
  type StoredAuditRecord,
} from "../audit/audit-read.js";
import { type AuditValue, auditValueOf, textOfAuditValue } from "../audit/audit-record.js";
import { CliError } from "../cli/cli-error.js";
import type { CliSettings } from "../cli/cli-settings.js";
import { readPrefixFromAny } from "../etcd/read-prefix.js";
import { epochAtRead } from "./commit.js";
import { type IntentPlan, planOfChanges } from "./intent-plan.js";
import { validateDesiredDoc } from "./load-desired-state.js";
import { diffIntent, isIntentKey } from "./plan-diff.js";

/** `rollback`'s plan: the changes back to the intent after `target`, and the epoch it read. */
export interface RollbackPlan {
  readonly plan: IntentPlan;
  readonly currentEpoch: number;
}

/**
 * Reads the prefix, then (at the same revision) the audit records after `target`, rebuilds the
 * intent after `target` ({@link intentAfterEpoch}), validates it as every file is validated and
 * diffs it against the read. `target` equal to the current epoch: no changes. Throws
 * `invalid-input` for an epoch after the current one.
 */
export async function planRollback(
  members: EtcdMembers,
  settings: CliSettings,
  target: number,
): Promise<RollbackPlan> {
  const read = await readPrefixFromAny(members, settings.prefix);
  const currentEpoch = epochAtRead(read).value;
  if (target > currentEpoch)
    throw new CliError(
      "invalid-input",
      `cannot roll back to epoch ${target}: the current epoch is ${currentEpoch}`,
    );
  if (target === currentEpoch) return { plan: planOfChanges(read, [], settings), currentEpoch };
  const [records, oldest] = await Promise.all([
    readAuditRecordsAfter(members, settings.auditPrefix, target, read.revision),
    oldestAuditEpoch(members, settings.auditPrefix, read.revision),
  ]);
  const intent = intentAfterEpoch({ read, currentEpoch, target, records, oldest });
  const desired = validateDesiredDoc(desiredDocOf(intent), `the intent after epoch ${target}`);
  return {
    plan: planOfChanges(read, diffIntent(read, desired, settings.prefix), settings),
    currentEpoch,
  };
}

/** What the intent after an epoch is rebuilt from. */
export interface RollbackSource {
  /** The current prefix, read at one revision. */
  readonly read: PrefixRead;
  /** The epoch that read holds. */
  readonly currentEpoch: number;
  /** The epoch to go back to. */
  readonly target: number;
  /** Every record of an epoch after `target`, read at `read.revision`. */
  readonly records: readonly StoredAuditRecord[];
  /** The oldest record's epoch (`null`: none), to tell pruned records from a gap. */
  readonly oldest: number | null;
}

const same = (text: string | undefined, v: AuditValue) =>
  JSON.stringify(auditValueOf(text)) === JSON.stringify(v);

const show = (v: AuditValue) => (v === null ? "(absent)" : safeText(JSON.stringify(v)));

/**
 * The intent keys (relative → text) as they were right after `target`: the current intent with
 * every newer epoch undone, newest first (each change's key set back to its `before`). Needs
 * no etcd history, so it works after compaction. Each undo first checks the key still holds
 * the record's `after`: a mismatch means the intent was changed outside edgectl (or the records
 * belong to another prefix), and rebuilding would be a guess, so it is an error naming the epoch
 * and key. Throws `audit-missing` when a record is pruned or absent, `audit-mismatch` otherwise.
 */
export function intentAfterEpoch(src: RollbackSource): Map<string, string> {
  const { target, currentEpoch } = src;
  const state = new Map<string, string>();
  for (const e of src.read.entries)
    if (isIntentKey(e.rel)) state.set(e.rel, e.value.toString("utf8"));
  const byEpoch = new Map<number, StoredAuditRecord>();
  for (const r of src.records) if (r.epoch !== null) byEpoch.set(r.epoch, r);
  for (let e = currentEpoch; e > target; e--) {
    const stored = byEpoch.get(e);
    if (!stored) {
      if (src.oldest === null || src.oldest > e) {
        const reach =
          src.oldest === null
            ? "there are no audit records"
            : `the oldest audit record kept is epoch ${src.oldest}, so rollback reaches back to epoch ${src.oldest - 1}`;
        throw new CliError(
          "audit-missing",
          `cannot roll back to epoch ${target}: it is older than the audit records (${reach}); nothing written`,
        );
      }
      throw new CliError(
        "audit-missing",
        `cannot roll back to epoch ${target}: the audit record of epoch ${e} is missing (a gap in the records); nothing written`,
      );
    }
    if (!stored.ok) {
      throw new CliError(
        "audit-mismatch",
        `cannot roll back to epoch ${target}: the audit record of epoch ${e} (${stored.key}) is invalid: ${stored.problem}; nothing written`,
      );
    }
    for (const c of stored.record.changes) {
      // A canary's start and end write canary/current, which is not intent.
      if (c.key === CANARY_KEY) continue;
      const now = state.get(c.key);
      if (!isIntentKey(c.key) || !same(now, c.after)) {
        throw new CliError(
          "audit-mismatch",
          `cannot roll back to epoch ${target}: epoch ${e}'s record says it set ${safeText(c.key)} to ${show(c.after)}, but after it the key holds ${show(auditValueOf(now))} (changed outside edgectl?); nothing written`,
        );
      }
      const before = textOfAuditValue(c.before);
      if (before === undefined) state.delete(c.key);
      else state.set(c.key, before);
    }
  }
  return state;
}

/**
 * The intent keys as a desired-state document, for the validation every file goes through
 * (`pool/X` → `pools.X`, `country/CC` → `countries.CC`, `continent/K` → `countries.continent/K`,
 * `fence/N` → `fences.N`).
 */
export function desiredDocOf(intent: ReadonlyMap<string, string>): {
  pools: Record<string, unknown>;
  countries: Record<string, unknown>;
  fences?: Record<string, unknown>;
} {
  const pools: Record<string, unknown> = {};
  const countries: Record<string, unknown> = {};
  const fences: Record<string, unknown> = {};
  for (const [rel, text] of intent) {
    // Not JSON, too large or too deep: left as text, and validation names the key.
    const parsed = parseBoundedJson(text);
    const value: unknown = parsed.ok ? parsed.value : text;
    if (rel.startsWith("pool/")) pools[rel.slice("pool/".length)] = value;
    else if (rel.startsWith("country/")) countries[rel.slice("country/".length)] = value;
    else if (rel.startsWith("fence/")) fences[rel.slice("fence/".length)] = value;
    else countries[rel] = value;
  }
  return { pools, countries, ...(Object.keys(fences).length > 0 ? { fences } : {}) };
}
