import { z } from "zod";
import { AuditCommandSchema, AuditValueSchema } from "../../audit-record.js";

const RouteEndShape = z.object({
  pool: z.string().describe("the pool the route picks under current health"),
  source: z.string().describe("the key it comes from: country/DE, continent/EU, override/DE, …"),
});

/**
 * `edgectl apply|move|rollback … -o json`: what was committed (the plan text goes to stderr).
 * `applied: false` means etcd already held that intent (exit 0, nothing written).
 */
export const IntentChangeShape = z
  .object({
    command: AuditCommandSchema.describe("the command, as its audit record names it"),
    applied: z.boolean().describe("false: nothing to change, nothing written"),
    epoch: z.number().int().describe("the epoch now: the new one when applied"),
    revision: z.number().int().describe("the commit's etcd revision (applied), else the read's"),
    readRevision: z.number().int().describe("the revision the plan was read at (the record's rev)"),
    rolledBackTo: z
      .number()
      .int()
      .optional()
      .describe("rollback: the epoch whose intent was restored"),
    changes: z
      .array(
        z.object({
          key: z.string().describe("relative to the routing prefix: country/DE, pool/fra-1, …"),
          kind: z.enum(["add", "change", "remove"]),
          before: AuditValueSchema.describe("the stored value (JSON), null when absent"),
          after: AuditValueSchema.describe("the value written, null when deleted"),
        }),
      )
      .describe("the intent keys changed, sorted; exactly the audit record's changes"),
    effect: z
      .array(
        z.object({
          route: z.string().describe("a country, or _default for every country without a route"),
          before: RouteEndShape,
          after: RouteEndShape,
        }),
      )
      .describe("routes whose pool (or origin or split) moves, under current health"),
    notes: z.array(z.string()).describe("what the plan does not show by itself (move)"),
  })
  .describe("apply, move, rollback: the intent change");

/** The parsed `apply`/`move`/`rollback` result. */
export type IntentChangeResult = z.output<typeof IntentChangeShape>;
