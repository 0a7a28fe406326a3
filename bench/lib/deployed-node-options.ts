import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const UNIT = fileURLToPath(new URL("../../deploy/edge-pusher.service", import.meta.url));

/**
 * The `NODE_OPTIONS` the systemd unit gives the pusher (its `Environment="NODE_OPTIONS=…"`
 * line), so the bench measures the process as deployed; null when the unit sets none.
 */
export function deployedNodeOptions(unitPath: string = UNIT): string | null {
  const text = readFileSync(unitPath, "utf8");
  const m = /^Environment="?NODE_OPTIONS=([^"\n]*)"?\s*$/m.exec(text);
  return m?.[1]?.trim() || null;
}
