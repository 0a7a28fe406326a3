import type { CompileOptions } from "../../core/index.js";
import type { CliSettings } from "./cli-settings.js";

/** The compile options the pusher would use with the same environment. */
export function compileOptions(settings: CliSettings, now: Date = new Date()): CompileOptions {
  return {
    prefix: settings.prefix,
    floorPool: settings.floorPool,
    originTemplate: settings.originTemplate,
    now,
    ...(settings.shedRecoverSeconds !== undefined
      ? { shedRecoverSeconds: settings.shedRecoverSeconds }
      : {}),
  };
}
