import { decodeSnapshot } from "../../core/index.js";
import type { CliSettings } from "../cli/cli-settings.js";
import { compileOptions } from "../cli/compile-options.js";
import { toSnapshot } from "../etcd/read-prefix.js";
import type { Paint } from "../output/colour.js";
import { type ApplyResult, ApplyShape } from "../output/shapes/apply-shape.js";
import type { ApplyCommit } from "./commit-plan.js";
import { edgeEffect, shiftDocument } from "./edge-effect.js";
import type { IntentPlan } from "./intent-plan.js";
import { changeDocument } from "./plan-document.js";

export { ApplyShape };

/**
 * What every intent-changing command (`apply`, `move`, `rollback`) reports about its commit: the
 * fields of `ApplyShape` but `file`.
 */
export function commitFields(
  settings: CliSettings,
  plan: Pick<IntentPlan, "read" | "changes">,
  commit: ApplyCommit | null,
): Omit<ApplyResult, "file"> {
  const snapshot = toSnapshot(plan.read);
  return {
    prefix: settings.prefix,
    applied: commit !== null,
    revision: plan.read.revision,
    epoch: commit?.epoch ?? decodeSnapshot(snapshot, settings.prefix).epoch,
    commit_revision: commit?.revision ?? null,
    changes: plan.changes.map(changeDocument),
    effect:
      commit === null
        ? []
        : edgeEffect(snapshot, plan.changes, compileOptions(settings, null)).map(shiftDocument),
  };
}

/** The `apply` result document (`ApplyShape`) of a plan, committed or found already applied. */
export function applyDocument(
  file: string,
  settings: CliSettings,
  plan: Pick<IntentPlan, "read" | "changes">,
  commit: ApplyCommit | null,
): ApplyResult {
  return { file, ...commitFields(settings, plan, commit) };
}

/** `apply`'s closing line in text mode (the plan was printed before it asked). */
export function applyText(r: ApplyResult, paint: Paint): string[] {
  if (!r.applied) return [`No changes: ${r.prefix} already holds ${r.file}. Nothing written.`];
  return [
    `${paint("green", "Applied")} ${r.changes.length} changes: epoch ${r.epoch} at revision ${r.commit_revision}.`,
  ];
}
