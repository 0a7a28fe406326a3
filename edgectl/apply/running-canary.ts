import type { PrefixEntry, PrefixRead } from "../../adapters/prefix-read.js";
import {
  CANARY_KEY,
  type Canary,
  CanarySchema,
  parseBoundedJson,
  safeText,
} from "../../core/index.js";
import { CliError } from "../cli/cli-error.js";

/** `canary/current` as read: absent, a valid canary, or a value that is not one. */
export type RunningCanary =
  | { readonly kind: "none" }
  | { readonly kind: "running"; readonly canary: Canary; readonly entry: PrefixEntry }
  | { readonly kind: "invalid"; readonly entry: PrefixEntry };

/** The canary in `read` (docs/reference.md §13). */
export function runningCanary(read: PrefixRead): RunningCanary {
  const entry = read.entries.find((e) => e.rel === CANARY_KEY);
  if (!entry) return { kind: "none" };
  const parsed = parseBoundedJson(entry.value.toString("utf8"));
  const canary = parsed.ok ? CanarySchema.safeParse(parsed.value) : null;
  return canary?.success
    ? { kind: "running", canary: canary.data, entry }
    : { kind: "invalid", entry };
}

/**
 * Throws `conflict` (exit 2) naming the canary when `canary/current` exists: one canary at a
 * time, and no plain change of intent under a running one (its stable side must not move).
 */
export function assertNoCanary(read: PrefixRead, command: string): void {
  const running = runningCanary(read);
  if (running.kind === "none") return;
  const name =
    running.kind === "running"
      ? `canary ${running.canary.id} (${running.canary.share} % since ${running.canary.started_at}, by ${safeText(running.canary.by, 64)})`
      : "an invalid canary/current value";
  throw new CliError(
    "conflict",
    `${command} refused: ${name} is running; promote or abort it first (edgectl canary status); nothing written`,
  );
}
