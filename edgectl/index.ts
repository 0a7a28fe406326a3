export {
  type ApplyLock,
  acquireApplyLock,
  type LockAttempt,
  newHolderId,
} from "./apply/apply-lock.js";
export {
  type CommitResult,
  commitApply,
  type EpochAtRead,
  epochAtRead,
} from "./apply/apply-transaction.js";
export { diffIntent, type KeyChange } from "./apply/plan-diff.js";
export { CliError, type CliErrorCode } from "./cli/cli-error.js";
export type { CliIo, TextSink } from "./cli/cli-io.js";
export { type CliSettings, cliSettingsFromEnv } from "./cli/cli-settings.js";
export { ExitCode } from "./cli/exit-codes.js";
export { ClusterLease } from "./etcd/cluster-lease.js";
export { EtcdMembers, withEtcdMembers } from "./etcd/etcd-members.js";
export { EtcdUnavailableError } from "./etcd/etcd-unavailable-error.js";
export {
  type PrefixRead,
  readPrefix,
  readPrefixFromAny,
  type StoredEntry,
  toSnapshot,
} from "./etcd/read-prefix.js";
export { type Explanation, explainCountry } from "./explain/explain-country.js";
export { run } from "./run.js";
