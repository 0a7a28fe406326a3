import type { Logger } from "pino";
import type { ObserveEvent } from "./observer-loop.js";

type Level = "info" | "warn" | "error";

const LINES: Record<ObserveEvent["event"], { readonly level: Level; readonly msg: string }> = {
  started: { level: "info", msg: "observing the edge" },
  "state-ignored": { level: "warn", msg: "state file not used" },
  "poll-failing": {
    level: "warn",
    msg: "polling the edge's observations failing; nothing written",
  },
  "poll-recovered": { level: "info", msg: "polling the edge's observations recovered" },
  "edge-reset": { level: "warn", msg: "the edge's aggregator restarted; counting on" },
  registered: { level: "info", msg: "lease granted for observed/ keys" },
  "observed-written": { level: "info", msg: "observed/ key written" },
  "observed-removed": { level: "info", msg: "observed/ key removed: below --min-samples" },
  released: { level: "warn", msg: "observations stale; the lease is no longer renewed" },
  "lease-lost": { level: "warn", msg: "lease lost; registering again" },
  "etcd-failing": { level: "error", msg: "writing observed/ keys failing; retrying" },
  "etcd-recovered": { level: "info", msg: "writing observed/ keys recovered" },
  "canary-judged": { level: "info", msg: "canary judged" },
  "canary-standby": { level: "info", msg: "another observer judges the canary" },
  "canary-rolled-back": { level: "warn", msg: "canary rolled back: a gate failed" },
  "canary-promoted": { level: "info", msg: "canary promoted: its gates held" },
  "canary-end-failed": { level: "error", msg: "ending the canary failed; trying again" },
  "canary-judge-failing": { level: "error", msg: "judging the canary failing; retrying" },
  stopped: { level: "info", msg: "stopped" },
};

/** Writes each observer event as one line of the shared log schema (`err` for an error). */
export function observerLog(logger: Logger): (e: ObserveEvent) => void {
  return (e) => {
    const line = LINES[e.event];
    logger[line.level](e, line.msg);
  };
}
