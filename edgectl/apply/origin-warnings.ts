import { checkOrigin, type DesiredState } from "../../core/index.js";

/**
 * One line per pool whose origin only a local Worker can reach (a loopback address), naming the
 * pool: `validate`, `plan` and `apply` accept it, for the local stack and tests, and warn.
 */
export function originWarnings(state: DesiredState): string[] {
  const lines: string[] = [];
  for (const [name, pool] of Object.entries(state.pools).sort(([a], [b]) => a.localeCompare(b))) {
    const c = checkOrigin(pool.origin);
    if (c.ok && c.warning) lines.push(`warning: pools.${name}.origin: ${c.warning}`);
  }
  return lines;
}
