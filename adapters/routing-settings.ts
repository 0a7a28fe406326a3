import {
  DEFAULT_FLOOR_POOL,
  DEFAULT_ORIGIN_TEMPLATE,
  DEFAULT_PREFIX,
  DEFAULT_SHED_RECOVER_SECONDS,
  isPoolName,
  originTemplateProblem,
  routingPrefixProblem,
  safeText,
} from "../core/index.js";
import { ConfigError } from "./errors.js";

/** The settings every compile needs, shared by the pusher and edgectl so both compile alike. */
export interface RoutingSettings {
  readonly prefix: string;
  readonly floorPool: string;
  readonly originTemplate: string;
  /**
   * How long a slow pool's shed share holds before it falls one step (`SHED_RECOVER_SECONDS`,
   * docs/reference.md §9); the core's default (60) when absent.
   */
  readonly shedRecoverSeconds?: number;
}

/**
 * Reads `ROUTING_PREFIX`, `FLOOR_POOL`, `ORIGIN_TEMPLATE` and `SHED_RECOVER_SECONDS` (a `prefix`
 * given here wins, for `--prefix`); a bad value is a `ConfigError` naming the variable.
 */
export function routingSettingsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  prefixOverride?: string,
): RoutingSettings {
  const prefix = (prefixOverride ?? env.ROUTING_PREFIX)?.trim() || DEFAULT_PREFIX;
  const prefixProblem = routingPrefixProblem(prefix);
  if (prefixProblem) throw new ConfigError("invalid-setting", "ROUTING_PREFIX", prefixProblem);
  const floorPool = env.FLOOR_POOL?.trim() || DEFAULT_FLOOR_POOL;
  if (!isPoolName(floorPool)) {
    throw new ConfigError("invalid-setting", "FLOOR_POOL", `"${floorPool}" is not a pool name`);
  }
  const originTemplate = env.ORIGIN_TEMPLATE?.trim() || DEFAULT_ORIGIN_TEMPLATE;
  const templateProblem = originTemplateProblem(originTemplate);
  if (templateProblem) throw new ConfigError("invalid-setting", "ORIGIN_TEMPLATE", templateProblem);
  const recoverRaw = env.SHED_RECOVER_SECONDS?.trim();
  const shedRecoverSeconds = recoverRaw ? Number(recoverRaw) : DEFAULT_SHED_RECOVER_SECONDS;
  if (!Number.isFinite(shedRecoverSeconds) || shedRecoverSeconds < 1) {
    throw new ConfigError(
      "invalid-setting",
      "SHED_RECOVER_SECONDS",
      `"${safeText(recoverRaw ?? "", 32)}" is not a number >= 1`,
    );
  }
  return { prefix, floorPool, originTemplate, shedRecoverSeconds };
}
