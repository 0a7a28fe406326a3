import { z } from "zod";
import { parseBoundedJson } from "../../core/index.js";

/** Default `AUDIT_PREFIX`: outside the routing prefix, so the pusher never reads or watches it. */
export const DEFAULT_AUDIT_PREFIX = "/edge/audit/v1/";

/** Default number of audit records kept (`EDGECTL_AUDIT_KEEP`): the newest 1,000 epochs. */
export const DEFAULT_AUDIT_KEEP = 1000;

/** Digits of the zero-padded epoch in a record's key, so key order is epoch order. */
export const AUDIT_EPOCH_DIGITS = 12;

/**
 * The commands that change intent, each writing one record (a canary's start is its `apply` or
 * `move`, writing `canary/current`; its end is one of the `canary-*`, docs/reference.md §13).
 */
export const AuditCommandSchema = z.enum([
  "apply",
  "move",
  "rollback",
  "canary-promote",
  "canary-rollback",
  "canary-abort",
]);
export type AuditCommand = z.output<typeof AuditCommandSchema>;

/**
 * A stored intent value as the record keeps it: the parsed JSON object for a JSON object, the
 * raw text (a string) for anything else (a value written by hand that is not an object), `null`
 * for an absent key.
 */
export const AuditValueSchema = z.union([z.record(z.string(), z.unknown()), z.string(), z.null()]);
export type AuditValue = z.output<typeof AuditValueSchema>;

/** One intent key the epoch changed; `key` is relative to the routing prefix (`country/DE`). */
export const AuditChangeSchema = z
  .object({
    key: z.string().min(1).describe("relative to the routing prefix: country/DE, pool/fra-1, …"),
    before: AuditValueSchema.describe(
      "the value before (JSON; a non-object as its text), null: absent",
    ),
    after: AuditValueSchema.describe("the value after, null: deleted"),
  })
  .strict();
export type AuditChange = z.output<typeof AuditChangeSchema>;

/**
 * `{AUDIT_PREFIX}{epoch, 12 digits}`: one intent change, written in the transaction that bumps
 * `epoch` to `epoch`. `rev` is the etcd revision the change was planned at (the read the diff
 * was made from; the transaction's compare proves nothing changed between it and the commit).
 * The commit's own revision is the record key's mod revision. `at` is edgectl's clock when it
 * sent the commit; `reason` is `null` without `--reason`.
 */
export const AuditRecordSchema = z
  .object({
    epoch: z.number().int().positive().describe("the epoch this change set"),
    rev: z.number().int().nonnegative().describe("the etcd revision the plan was read at"),
    at: z.iso.datetime({ offset: true }).describe("when edgectl sent the commit (ISO 8601)"),
    by: z.string().min(1).describe("EDGECTL_USER, else user@host"),
    command: AuditCommandSchema,
    reason: z.string().nullable().describe("--reason (rollback: 'rollback to epoch N[: …]')"),
    changes: z.array(AuditChangeSchema).describe("every intent key changed, sorted by key"),
  })
  .strict();
export type AuditRecord = z.output<typeof AuditRecordSchema>;

/** The etcd key of epoch `epoch`'s record. */
export function auditKey(auditPrefix: string, epoch: number): string {
  return `${auditPrefix}${String(epoch).padStart(AUDIT_EPOCH_DIGITS, "0")}`;
}

/** The epoch a record key names, or `null` when the key is not `{prefix}{12 digits}`. */
export function epochOfAuditKey(auditPrefix: string, key: string): number | null {
  const tail = key.slice(auditPrefix.length);
  if (!key.startsWith(auditPrefix) || !/^[0-9]{12}$/.test(tail)) return null;
  return Number(tail);
}

/**
 * A stored value (text, `undefined` when absent) as the record keeps it. Only a JSON object
 * within `parseBoundedJson`'s bounds is kept as an object, and only one whose keys all survive
 * the record's schema (a `__proto__` key would not): anything else, a value nested thousands of
 * levels deep or over 64 KiB included, is kept as its exact text, which the record can always
 * hold and print.
 */
export function auditValueOf(text: string | undefined): AuditValue {
  if (text === undefined) return null;
  const parsed = parseBoundedJson(text);
  const v = parsed.ok ? parsed.value : null;
  if (v !== null && typeof v === "object" && !Array.isArray(v) && !Object.hasOwn(v, "__proto__"))
    return v as Record<string, unknown>;
  return text;
}

/** The text a record's value stands for (`undefined`: the key is absent). */
export function textOfAuditValue(v: AuditValue): string | undefined {
  if (v === null) return undefined;
  return typeof v === "string" ? v : JSON.stringify(v);
}
