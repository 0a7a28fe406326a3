import { z } from "zod";
import type { ObserveEvent } from "../../../observer/observer-loop.js";

const EVENTS = [
  "started",
  "state-ignored",
  "poll-failing",
  "poll-recovered",
  "edge-reset",
  "registered",
  "observed-written",
  "observed-removed",
  "released",
  "lease-lost",
  "etcd-failing",
  "etcd-recovered",
  "canary-judged",
  "canary-standby",
  "canary-rolled-back",
  "canary-promoted",
  "canary-end-failed",
  "canary-judge-failing",
  "stopped",
] as const satisfies readonly ObserveEvent["event"][];

// fails to compile when observer-loop.ts gains an event this shape does not list
type Missing = Exclude<ObserveEvent["event"], (typeof EVENTS)[number]>;
const everyEvent: [Missing] extends [never] ? true : Missing = true;
void everyEvent;

/**
 * `edgectl observe --edge URL -o json`: long-running, so JSON lines, one per state change (the
 * first is `started`, the last `stopped` on SIGTERM). A failure that ends the command is the
 * error shape as the last line.
 */
export const ObserveEventShape = z
  .object({
    time: z.string().describe("ISO 8601"),
    event: z.enum(EVENTS),
    edge: z.string().describe("the edge's origin (never the token)"),
    reason: z
      .enum([
        "edge-unreachable",
        "unauthorized",
        "edge-status",
        "junk-response",
        "etcd-failing",
        "starting",
      ])
      .optional()
      .describe("poll-failing, etcd-failing: why"),
    country: z.string().optional(),
    pool: z.string().optional(),
    p90_ms: z.number().optional().describe("observed-written: the value written"),
    samples: z.number().optional(),
    error_ratio: z.number().optional(),
    lease: z.string().optional().describe("registered: the lease in hex"),
    canary: z.string().optional().describe("canary-*: the canary's id"),
    detail: z.string().optional(),
  })
  .describe("observe: one line per state change");

/** One parsed observe event. */
export type ObserveEventLine = z.output<typeof ObserveEventShape>;
