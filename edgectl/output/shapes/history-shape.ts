import { z } from "zod";
import { AuditRecordSchema } from "../../audit/audit-record.js";

/** `edgectl history -o json`: the audit records, newest first (docs/reference.md §2's record shape). */
export const HistoryShape = z
  .object({
    audit_prefix: z.string().describe("AUDIT_PREFIX the records were read from"),
    records: z
      .array(
        AuditRecordSchema.extend({
          commit_revision: z
            .number()
            .int()
            .describe("the revision of the commit that wrote the record (its key's mod revision)"),
        }),
      )
      .describe("newest first, at most --limit"),
    invalid: z
      .array(
        z.object({
          key: z.string(),
          epoch: z.number().int().nullable(),
          problem: z.string(),
        }),
      )
      .describe("keys under AUDIT_PREFIX in that range that are not valid records"),
  })
  .describe("history: the audit records");

/** The parsed `history` result. */
export type HistoryResult = z.output<typeof HistoryShape>;
