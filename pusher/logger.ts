import { type DestinationStream, type Logger, pino } from "pino";

/** Paths pino blanks out, in case a secret ever reaches a log call. */
export const REDACT_PATHS = [
  "token",
  "apiToken",
  "password",
  "authorization",
  "*.token",
  "*.apiToken",
  "*.password",
  "*.authorization",
  "CF_API_TOKEN",
  "*.CF_API_TOKEN",
  "ETCD_PASSWORD",
  "*.ETCD_PASSWORD",
];

/** The pusher's JSON-lines logger (stdout unless a destination is given). */
export function createLogger(
  opts: { readonly level?: string; readonly destination?: DestinationStream } = {},
): Logger {
  const options = {
    name: "edge-pusher",
    level: opts.level ?? "info",
    redact: { paths: REDACT_PATHS, censor: "[redacted]" },
  };
  return opts.destination ? pino(options, opts.destination) : pino(options);
}
