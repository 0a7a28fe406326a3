import type { CarriedState, CompileOptions } from "../../core/index.js";
import type { CliSettings } from "./cli-settings.js";

/**
 * The compile options the pusher would use with the same environment, carrying `carried`: KV's
 * map (`carriedState({ kv })`) to see what the edge serves, `null` for the intent alone.
 */
export function compileOptions(
  settings: CliSettings,
  carried: CarriedState | null,
  now: Date = new Date(),
): CompileOptions {
  return {
    carried,
    prefix: settings.prefix,
    floorPool: settings.floorPool,
    originTemplate: settings.originTemplate,
    now,
    ...(settings.shedRecoverSeconds !== undefined
      ? { shedRecoverSeconds: settings.shedRecoverSeconds }
      : {}),
  };
}
