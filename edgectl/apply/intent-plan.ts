import type { EtcdMembers } from "../../adapters/etcd-members.js";
import type { PrefixRead } from "../../adapters/prefix-read.js";
import type { DesiredState } from "../../core/index.js";
import type { CliSettings } from "../cli/cli-settings.js";
import { compileOptions } from "../cli/compile-options.js";
import { readPrefixFromAny, toSnapshot } from "../etcd/read-prefix.js";
import { edgeEffect, formatEdgeEffect } from "./edge-effect.js";
import { diffIntent, type KeyChange } from "./plan-diff.js";
import { assertNoNewProblems } from "./proposed-problems.js";

/** What `plan` and `apply` work from: one read of the prefix and the changes to the desired state. */
export interface IntentPlan {
  readonly read: PrefixRead;
  readonly changes: KeyChange[];
  /** The edge-effect lines of the changes under current health (compiled when called). */
  effectLines(): string[];
  /** Throws the CLI error of problems the changes would add (compiled when called). */
  assertNoNewProblems(): void;
}

/** Reads `settings.prefix` from any member and diffs it against `desired`. */
export async function planIntent(
  members: EtcdMembers,
  settings: CliSettings,
  desired: DesiredState,
): Promise<IntentPlan> {
  const read = await readPrefixFromAny(members, settings.prefix);
  return planOfChanges(read, diffIntent(read, desired, settings.prefix), settings);
}

/** The plan of changes already worked out from `read` (`move`, `rollback`). */
export function planOfChanges(
  read: PrefixRead,
  changes: KeyChange[],
  settings: CliSettings,
): IntentPlan {
  return {
    read,
    changes,
    effectLines: () =>
      formatEdgeEffect(edgeEffect(toSnapshot(read), changes, compileOptions(settings, null))),
    assertNoNewProblems: () =>
      assertNoNewProblems(toSnapshot(read), changes, compileOptions(settings, null)),
  };
}
