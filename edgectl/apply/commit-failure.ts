import { CliError } from "../cli/cli-error.js";
import type { CommitResult } from "./apply-transaction.js";

/**
 * The apply's message and exit code for a commit that did not apply: 2 conflict (epoch moved, lock
 * lost), 4 etcd unavailable (proven not written), 5 outcome unknown.
 */
export function commitFailure(
  result: Extract<CommitResult, { ok: false }>,
  from: number,
): CliError {
  const now = result.epochNow ?? "(deleted)";
  switch (result.reason) {
    case "epoch-moved":
      return new CliError(
        "conflict",
        `conflict: epoch moved from ${from} to ${now} since the read; nothing written (run plan again)`,
      );
    case "lock-lost":
      return new CliError(
        "conflict",
        "conflict: lock/apply is no longer ours (its lease expired); nothing written",
      );
    case "not-landed":
      return new CliError(
        "etcd-unavailable",
        `etcd unavailable: every commit's member failed before answering; each was fenced off (lock/apply revoked) and epoch is still ${now}, so nothing was written and nothing will be (run apply again)`,
      );
    case "unknown":
      return new CliError(
        "outcome-unknown",
        `outcome unknown: the commit's reply was lost and etcd could not tell whether it landed (no member answered in time, or its history was compacted; epoch is now ${now}); run plan to see what etcd holds`,
      );
  }
}
