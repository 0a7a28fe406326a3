import {
  DEFAULT_FLOOR_POOL,
  DEFAULT_ORIGIN_TEMPLATE,
  DEFAULT_PREFIX,
  isPoolName,
  originTemplateProblem,
  routingPrefixProblem,
} from "../core/index.js";
import { ConfigError } from "./errors.js";

/** The settings every compile needs, shared by the pusher and edgectl so both compile alike. */
export interface RoutingSettings {
  readonly prefix: string;
  readonly floorPool: string;
  readonly originTemplate: string;
}

/**
 * Reads `ROUTING_PREFIX`, `FLOOR_POOL` and `ORIGIN_TEMPLATE` (a `prefix` given here wins, for
 * `--prefix`); a bad value is a `ConfigError` naming the variable.
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
  return { prefix, floorPool, originTemplate };
}
