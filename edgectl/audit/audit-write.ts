import {
  type AuditCommand,
  type AuditRecord,
  AuditRecordSchema,
  auditKey,
  auditValueOf,
} from "./audit-record.js";

/** One changed intent key as the record keeps it (apply's `KeyChange` is one). */
export interface RecordedChange {
  readonly kind: "add" | "change" | "remove";
  /** The key relative to the routing prefix. */
  readonly rel: string;
  readonly before?: string;
  readonly after?: string;
}

/** Who, why and from what read: everything the record needs besides the epoch and the changes. */
export interface AuditStamp {
  /** `AUDIT_PREFIX`. */
  readonly prefix: string;
  /** Records kept: the commit deletes those older than the newest `keep`. */
  readonly keep: number;
  readonly by: string;
  readonly command: AuditCommand;
  readonly reason: string | null;
  /** The revision the plan was read at. */
  readonly rev: number;
  /** When the commit is sent (ISO 8601). */
  readonly at: string;
}

/** The stamp for one commit, from the settings, the command and the plan's read revision. */
export function auditStamp(
  settings: { readonly auditPrefix: string; readonly auditKeep: number; readonly user: string },
  command: AuditCommand,
  reason: string | undefined,
  rev: number,
  now: Date = new Date(),
): AuditStamp {
  return {
    prefix: settings.auditPrefix,
    keep: settings.auditKeep,
    by: settings.user,
    command,
    reason: reason ?? null,
    rev,
    at: now.toISOString(),
  };
}

/** The record of the commit that makes `epoch` (validated by the schema every reader uses). */
export function auditRecordOf(
  stamp: AuditStamp,
  epoch: number,
  changes: readonly RecordedChange[],
): AuditRecord {
  return AuditRecordSchema.parse({
    epoch,
    rev: stamp.rev,
    at: stamp.at,
    by: stamp.by,
    command: stamp.command,
    reason: stamp.reason,
    changes: changes.map((c) => ({
      key: c.rel,
      before: auditValueOf(c.kind === "add" ? undefined : c.before),
      after: auditValueOf(c.kind === "remove" ? undefined : c.after),
    })),
  });
}

/**
 * What the commit of `epoch` writes besides the intent: the record, and the key range of the
 * records that fall out of retention (epochs up to `epoch − keep`, deleted as one range, so
 * pruning costs one operation however many records it drops); `prune` is `null` while fewer than
 * `keep` epochs exist.
 */
export function auditWrites(
  stamp: AuditStamp,
  epoch: number,
  changes: readonly RecordedChange[],
): {
  readonly key: string;
  readonly value: string;
  readonly prune: { readonly start: string; readonly end: string } | null;
} {
  const oldestKept = epoch - stamp.keep + 1;
  return {
    key: auditKey(stamp.prefix, epoch),
    value: JSON.stringify(auditRecordOf(stamp, epoch, changes)),
    prune:
      oldestKept > 1
        ? { start: auditKey(stamp.prefix, 0), end: auditKey(stamp.prefix, oldestKept) }
        : null,
  };
}

/** Operations the commit adds to the changed keys: the epoch bump, the record and the pruning. */
export const COMMIT_EXTRA_OPS = 3;
