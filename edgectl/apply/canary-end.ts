import type { EtcdMembers } from "../../adapters/etcd-members.js";
import type { PrefixRead } from "../../adapters/prefix-read.js";
import { CANARY_KEY, type Canary, safeText } from "../../core/index.js";
import { auditStamp } from "../audit/audit-write.js";
import { CliError } from "../cli/cli-error.js";
import type { CliSettings } from "../cli/cli-settings.js";
import { readPrefixFromAny } from "../etcd/read-prefix.js";
import { acquireApplyLock } from "./apply-lock.js";
import { commitUnderLock, epochAtRead } from "./commit.js";
import { commitFailure } from "./commit-plan.js";
import type { KeyChange } from "./plan-diff.js";
import { runningCanary } from "./running-canary.js";

/** How a canary ends (docs/reference.md §13). */
export type CanaryEnd = "promote" | "rollback" | "abort";

/** What ending a canary committed. */
export interface CanaryEnded {
  readonly id: string;
  readonly how: CanaryEnd;
  readonly epoch: number;
  readonly revision: number;
}

/**
 * The changes that end `canary` in `read`: `canary/current` removed and, to promote, its
 * changes made to the intent keys. Promotion checks each key still holds what the canary
 * started from (nothing may change the stable intent under a canary); `conflict` when one does not.
 */
export function canaryEndChanges(
  read: PrefixRead,
  prefix: string,
  canary: Canary,
  canaryText: string,
  how: CanaryEnd,
): KeyChange[] {
  const removeCanary: KeyChange = {
    kind: "remove",
    key: `${prefix}${CANARY_KEY}`,
    rel: CANARY_KEY,
    before: canaryText,
  };
  if (how !== "promote") return [removeCanary];
  const now = new Map(read.entries.map((e) => [e.rel, e.value.toString("utf8")] as const));
  const intent: KeyChange[] = [];
  for (const c of canary.changes) {
    const held = now.get(c.key) ?? null;
    if (held !== c.before) {
      throw new CliError(
        "conflict",
        `cannot promote canary ${canary.id}: ${safeText(c.key, 96)} changed since the canary started; abort it and plan again; nothing written`,
      );
    }
    const key = `${prefix}${c.key}`;
    if (c.after === null) intent.push({ kind: "remove", key, rel: c.key, before: c.before ?? "" });
    else if (c.before === null) intent.push({ kind: "add", key, rel: c.key, after: c.after });
    else intent.push({ kind: "change", key, rel: c.key, before: c.before, after: c.after });
  }
  return [removeCanary, ...intent].sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
}

/**
 * Ends the running canary under `lock/apply` with the epoch CAS and an audit record
 * (`canary-promote`, `canary-rollback` or `canary-abort`, with `reason`), exactly as a plain
 * apply commits: promotion writes the canary's intent, the others only remove it. `expectId`:
 * refuse (`conflict`) when another canary runs. Throws `invalid-input` when none runs.
 */
export async function endCanary(
  members: EtcdMembers,
  settings: CliSettings,
  how: CanaryEnd,
  reason: string,
  expectId: string | null,
  warn: (line: string) => void,
): Promise<CanaryEnded> {
  const read = await readPrefixFromAny(members, settings.prefix);
  const running = runningCanary(read);
  if (running.kind === "none")
    throw new CliError("invalid-input", "no canary is running; nothing written");
  if (running.kind === "invalid" && how === "promote")
    throw new CliError(
      "invalid-input",
      "canary/current is not a valid canary: abort it; nothing written",
    );
  const id = running.kind === "running" ? running.canary.id : "invalid";
  if (expectId !== null && id !== expectId)
    throw new CliError(
      "conflict",
      `canary ${expectId} is no longer running (now: ${id}); nothing written`,
    );
  const text = running.entry.value.toString("utf8");
  const changes =
    running.kind === "running"
      ? canaryEndChanges(read, settings.prefix, running.canary, text, how)
      : [{ kind: "remove" as const, key: running.entry.key, rel: CANARY_KEY, before: text }];
  const epoch = epochAtRead(read);
  const attempt = await acquireApplyLock(members, settings.prefix, settings.lockTtlSeconds);
  const stamp = auditStamp(settings, `canary-${how}`, reason, read.revision);
  const result = await commitUnderLock(members, settings, attempt, epoch, changes, stamp, warn);
  if (!result.ok) throw commitFailure(result, epoch.value);
  return { id, how, epoch: result.epoch, revision: result.revision };
}
