import type { DestinationStream, Logger } from "pino";
import { createLogger } from "../adapters/logger.js";

/** The pusher's JSON-lines logger (stdout unless a destination is given): `service` edge-pusher. */
export function createPusherLogger(
  opts: {
    readonly level?: string;
    readonly destination?: DestinationStream;
    /** The `instance` field: `PUSHER_ID`. */
    readonly instance?: string;
  } = {},
): Logger {
  return createLogger({
    service: "edge-pusher",
    ...(opts.level ? { level: opts.level } : {}),
    ...(opts.destination ? { destination: opts.destination } : {}),
    ...(opts.instance ? { instance: opts.instance } : {}),
  });
}
