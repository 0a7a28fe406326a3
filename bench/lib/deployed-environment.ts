import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const UNIT = fileURLToPath(new URL("../../deploy/edge-pusher.service", import.meta.url));

/**
 * The variables the systemd unit sets for the pusher (its `Environment=` lines: `NODE_OPTIONS`,
 * glibc malloc's settings), so the bench runs the process as deployed. A value with a systemd
 * specifier (`%C/…`) names a directory of the service manager's and is left out.
 */
export function deployedEnvironment(unitPath: string = UNIT): Readonly<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const line of readFileSync(unitPath, "utf8").split("\n")) {
    const m = /^Environment=(.*)$/.exec(line.trim());
    if (!m?.[1]) continue;
    // systemd's own splitting: words apart by spaces, a double-quoted word may hold them.
    for (const word of m[1].matchAll(/"([^"]*)"|(\S+)/g)) {
      const assignment = word[1] ?? word[2] ?? "";
      const eq = assignment.indexOf("=");
      if (eq <= 0) continue;
      const value = assignment.slice(eq + 1);
      if (!value.includes("%")) env[assignment.slice(0, eq)] = value;
    }
  }
  return env;
}

/** The unit's `NODE_OPTIONS` ({@link deployedEnvironment}); null when it sets none. */
export function deployedNodeOptions(unitPath: string = UNIT): string | null {
  return deployedEnvironment(unitPath).NODE_OPTIONS?.trim() || null;
}
