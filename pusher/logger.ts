import type { DestinationStream, Logger } from "pino";
import { createLogger as createServiceLogger } from "../adapters/logger.js";

export { REDACT_PATHS } from "../adapters/logger.js";

/** The pusher's JSON-lines logger (stdout unless a destination is given): `service` edge-pusher. */
export function createLogger(
  opts: {
    readonly level?: string;
    readonly destination?: DestinationStream;
    /** The `instance` field: `PUSHER_ID`. */
    readonly instance?: string;
  } = {},
): Logger {
  return createServiceLogger({
    service: "edge-pusher",
    ...(opts.level ? { level: opts.level } : {}),
    ...(opts.destination ? { destination: opts.destination } : {}),
    ...(opts.instance ? { instance: opts.instance } : {}),
  });
}
