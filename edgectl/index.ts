export { type ApplyLock, acquireApplyLock, type LockAttempt, newHolderId } from "./apply-lock.js";
export {
  type CommitResult,
  commitApply,
  type EpochAtRead,
  epochAtRead,
} from "./apply-transaction.js";
export { CliError, type CliErrorCode } from "./cli-error.js";
export type { CliIo, TextSink } from "./cli-io.js";
export { type CliSettings, cliSettingsFromEnv } from "./cli-settings.js";
export { ClusterLease } from "./cluster-lease.js";
export {
  type PrefixRead,
  readPrefix,
  readPrefixFromAny,
  type StoredEntry,
  toSnapshot,
} from "./etcd-client.js";
export { EtcdMembers, withEtcdMembers } from "./etcd-members.js";
export { EtcdUnavailableError } from "./etcd-unavailable-error.js";
export { ExitCode } from "./exit-codes.js";
export { type Explanation, explainCountry } from "./explain-country.js";
export { diffIntent, type KeyChange } from "./plan-diff.js";
export { run } from "./run.js";
