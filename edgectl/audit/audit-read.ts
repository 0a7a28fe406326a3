import type { IKeyValue } from "etcd3";
import type { EtcdMembers } from "../../adapters/etcd-members.js";
import { MAX_JSON_DEPTH, parseBoundedJson, safeText } from "../../core/index.js";
import { type AuditRecord, AuditRecordSchema, auditKey, epochOfAuditKey } from "./audit-record.js";

/** One key under `AUDIT_PREFIX`, decoded: a record, or why it is not one. */
export type StoredAuditRecord =
  | {
      readonly ok: true;
      readonly epoch: number;
      /** The revision of the commit that wrote it (its key's mod revision). */
      readonly commitRevision: number;
      readonly record: AuditRecord;
    }
  | {
      readonly ok: false;
      /** The epoch its key names (`null`: the key is not `{AUDIT_PREFIX}{12 digits}`). */
      readonly epoch: number | null;
      readonly key: string;
      readonly problem: string;
    };

/**
 * How deep a record may nest: its values (`auditValueOf`) sit 3 levels down
 * (`changes[i].before`). A record is as large as etcd let it be written, so only depth is bounded.
 */
const RECORD_BOUNDS = { maxChars: Number.POSITIVE_INFINITY, maxDepth: MAX_JSON_DEPTH + 3 };

/** Records read per request: 25 records of a large apply (~30 KB each) stay far below gRPC's 4 MiB. */
export const AUDIT_PAGE = 25;

function decode(auditPrefix: string, kv: IKeyValue): StoredAuditRecord {
  const key = kv.key.toString("utf8");
  const epoch = epochOfAuditKey(auditPrefix, key);
  const bad = (problem: string): StoredAuditRecord => ({ ok: false, epoch, key, problem });
  if (epoch === null) return bad("not an audit record key ({AUDIT_PREFIX}{12-digit epoch})");
  const raw = parseBoundedJson(kv.value.toString("utf8"), RECORD_BOUNDS);
  if (!raw.ok)
    return bad(
      raw.reason === "too-deep" ? `nested over ${RECORD_BOUNDS.maxDepth} levels deep` : "not JSON",
    );
  const parsed = AuditRecordSchema.safeParse(raw.value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return bad(safeText(`${issue?.path.join(".") || "(record)"}: ${issue?.message ?? "invalid"}`));
  }
  if (parsed.data.epoch !== epoch) return bad(`holds epoch ${parsed.data.epoch}, not ${epoch}`);
  return { ok: true, epoch, commitRevision: Number(kv.mod_revision), record: parsed.data };
}

/** The newest `limit` records, newest first. */
export async function readNewestAuditRecords(
  members: EtcdMembers,
  auditPrefix: string,
  limit: number,
): Promise<StoredAuditRecord[]> {
  const out: StoredAuditRecord[] = [];
  let end: string | null = null;
  let revision: number | null = null;
  while (out.length < limit) {
    const page = Math.min(AUDIT_PAGE, limit - out.length);
    const res = await members.any("read audit records", (c, call) => {
      const b = c.getAll().sort("Key", "Descend").limit(page);
      const range = end === null ? b.prefix(auditPrefix) : b.inRange({ start: auditPrefix, end });
      return (revision === null ? range : range.revision(revision)).options(call).exec();
    });
    // every page at the first page's revision: one consistent view
    revision ??= Number(res.header.revision);
    for (const kv of res.kvs) out.push(decode(auditPrefix, kv));
    const last = res.kvs[res.kvs.length - 1];
    if (!res.more || !last) break;
    end = last.key.toString("utf8");
  }
  return out;
}

/**
 * Every record of an epoch after `epoch`, oldest first, read at `revision` (the plan's read, so
 * records and intent are one view), in pages of {@link AUDIT_PAGE}.
 */
export async function readAuditRecordsAfter(
  members: EtcdMembers,
  auditPrefix: string,
  epoch: number,
  revision: number,
): Promise<StoredAuditRecord[]> {
  const out: StoredAuditRecord[] = [];
  const end = `${auditPrefix.slice(0, -1)}${String.fromCharCode(auditPrefix.charCodeAt(auditPrefix.length - 1) + 1)}`;
  let start = auditKey(auditPrefix, epoch + 1);
  for (;;) {
    const from = start;
    const res = await members.any("read audit records", (c, call) =>
      c
        .getAll()
        .inRange({ start: from, end })
        .sort("Key", "Ascend")
        .limit(AUDIT_PAGE)
        .revision(revision)
        .options(call)
        .exec(),
    );
    for (const kv of res.kvs) out.push(decode(auditPrefix, kv));
    const last = res.kvs[res.kvs.length - 1];
    if (!res.more || !last) return out;
    start = `${last.key.toString("utf8")}\0`;
  }
}

/** The oldest record's epoch under `auditPrefix` (`null`: there is none). */
export async function oldestAuditEpoch(
  members: EtcdMembers,
  auditPrefix: string,
  revision: number,
): Promise<number | null> {
  const keys = await members.any("read oldest audit record", (c, call) =>
    c
      .getAll()
      .prefix(auditPrefix)
      .sort("Key", "Ascend")
      .limit(1)
      .revision(revision)
      .options(call)
      .keys(),
  );
  const key = keys[0];
  return key === undefined ? null : epochOfAuditKey(auditPrefix, key);
}
