/** Codes for configuration and startup errors shared by the pusher and edgectl. */
export type ConfigErrorCode =
  | "missing-setting"
  | "invalid-setting"
  | "unreadable-file"
  /** A setting still holds a committed template's placeholder (deploy/pusher.env.example). */
  | "placeholder-setting"
  /** A package the chosen setting needs is not installed (e.g. miniflare for `KV_SINK=local`). */
  | "missing-dependency";

/** A startup/configuration problem, reported as one clear line with a non-zero exit. */
export class ConfigError extends Error {
  override readonly name = "ConfigError";
  constructor(
    readonly code: ConfigErrorCode,
    readonly setting: string,
    message: string,
  ) {
    super(`${setting}: ${message}`);
  }
}
