import { hostname } from "node:os";
import { type DestinationStream, type Logger, type LoggerOptions, pino } from "pino";
import { VERSION } from "./version.js";

/**
 * Paths pino blanks out, in case a secret ever reaches a log call. Each name is listed as written
 * and in snake_case: redaction runs after `logFields` renamed the fields.
 */
export const REDACT_PATHS: readonly string[] = [
  "token",
  "apiToken",
  "api_token",
  "password",
  "authorization",
  "CF_API_TOKEN",
  "cf_api_token",
  "ETCD_PASSWORD",
  "etcd_password",
  "OBSERVE_TOKEN",
  "observe_token",
].flatMap((name) => [name, `*.${name}`]);

/** Which program writes the log (the `service` field). */
export type LogService = "edge-pusher" | "edge-heartbeat" | "edge-observer" | "edgectl";

/** What `createLogger` needs; only `service` is required. */
export interface LoggerSettings {
  readonly service: LogService;
  /** The `instance` field: which process among several of one service (default `<host>-<pid>`). */
  readonly instance?: string;
  readonly level?: string;
  /** Where the JSON lines go (default stdout). */
  readonly destination?: DestinationStream;
}

const snakeCase = (key: string) => key.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();

/**
 * The one log schema's field rule: every top-level field in snake_case, and an error under
 * `err` (a call site's `error` is renamed), so every program's lines read the same.
 */
export function logFields(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key === "error" ? "err" : snakeCase(key)] = value;
  }
  return out;
}

/**
 * The JSON-lines logger every program uses (pusher, heartbeat, edgectl): pino, ISO `time`,
 * numeric `level`, `msg`, the base fields `service`, `version` and `instance`, errors under
 * `err` (pino's error serializer: `type`, `message`, `stack`), secrets redacted.
 */
export function createLogger(settings: LoggerSettings): Logger {
  const options: LoggerOptions = {
    level: settings.level ?? "info",
    base: {
      service: settings.service,
      version: VERSION,
      instance: settings.instance ?? `${hostname()}-${process.pid}`,
    },
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { log: logFields },
    redact: { paths: [...REDACT_PATHS], censor: "[redacted]" },
  };
  return settings.destination ? pino(options, settings.destination) : pino(options);
}
