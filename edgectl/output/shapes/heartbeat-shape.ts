import { z } from "zod";
import type { HeartbeatEvent } from "../../../heartbeat/heartbeat-loop.js";
import type { ProbeOutcome } from "../../../heartbeat/http-probe.js";

const EVENTS = [
  "registered",
  "check-failed",
  "status-changed",
  "p90-changed",
  "renew-failing",
  "renew-recovered",
  "lease-lost",
  "register-failed",
  "stopped",
] as const satisfies readonly HeartbeatEvent["event"][];

// fails to compile when heartbeat-loop.ts gains an event this shape does not list
type Missing = Exclude<HeartbeatEvent["event"], (typeof EVENTS)[number]>;
const everyEvent: [Missing] extends [never] ? true : Missing = true;
void everyEvent;

const CHECKS = [
  "ok",
  "status",
  "timeout",
  "refused",
  "dns",
  "tls",
  "reset",
  "unreachable",
  "other",
] as const satisfies readonly ProbeOutcome[];
type MissingCheck = Exclude<ProbeOutcome, (typeof CHECKS)[number]>;
const everyCheck: [MissingCheck] extends [never] ? true : MissingCheck = true;
void everyCheck;

/**
 * `edgectl heartbeat POOL -o json`: long-running, so not one document but JSON lines, one per
 * state change (the first is `registered`, the last `stopped` on SIGTERM). A failure that ends
 * the command is the error shape as the last line.
 */
export const HeartbeatEventShape = z
  .object({
    time: z.string().describe("ISO 8601"),
    event: z.enum(EVENTS),
    pool: z.string(),
    checker: z.string().optional().describe("with --checker: the key is health/POOL/CHECKER"),
    status: z.enum(["healthy", "draining", "unhealthy"]).describe("the status health/POOL holds"),
    p90_ms: z
      .number()
      .optional()
      .describe("the p90 the key holds, in ms, once a check has measured one"),
    lease: z.string().optional().describe("the lease in hex, once one is granted"),
    detail: z.string().optional(),
    check: z
      .enum(CHECKS)
      .optional()
      .describe(
        "check-failed and status-changed: how the check went (status: an answer other than 2xx/3xx)",
      ),
    http_status: z.number().int().optional().describe("with check: the HTTP status it got"),
  })
  .describe("heartbeat: one line per state change");

/** One parsed heartbeat event. */
export type HeartbeatEventLine = z.output<typeof HeartbeatEventShape>;
