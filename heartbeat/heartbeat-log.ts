import type { Logger } from "pino";
import type { HeartbeatEvent } from "./heartbeat-loop.js";

type Level = "info" | "warn" | "error";

const LINES: Record<HeartbeatEvent["event"], { readonly level: Level; readonly msg: string }> = {
  registered: { level: "info", msg: "health key written under a new lease" },
  "check-failed": { level: "warn", msg: "check failed" },
  "status-changed": { level: "warn", msg: "status changed" },
  "p90-changed": { level: "info", msg: "p90 moved by more than 10 % and 50 ms; rewritten" },
  "renew-failing": { level: "warn", msg: "lease renewal failing; retrying" },
  "renew-recovered": { level: "info", msg: "lease renewal recovered" },
  "lease-lost": { level: "warn", msg: "lease lost; registering again" },
  "register-failed": { level: "error", msg: "registration failed; retrying" },
  stopped: { level: "info", msg: "stopped" },
};

/**
 * Writes each heartbeat event as one line of the shared log schema: `event`, `pool`, `checker` (with `--checker`), `status`, `p90_ms`,
 * `lease` (hex), `detail`, how a check went (`check`, `http_status`), and the error under `err`.
 * A recovery is logged at info.
 */
export function heartbeatLog(logger: Logger): (e: HeartbeatEvent) => void {
  return (e) => {
    const line = LINES[e.event];
    const level = e.event === "status-changed" && e.status === "healthy" ? "info" : line.level;
    logger[level](e, line.msg);
  };
}
