/** Process exit codes of `edgectl` (docs/reference.md §6). */
export const ExitCode = {
  ok: 0,
  /** Invalid input, refused, unreachable, behind. */
  failure: 1,
  /** `apply`: the epoch moved (or the lock was lost) between the read and the commit. */
  conflict: 2,
  /** `apply`: `lock/apply` is held by another holder. */
  locked: 3,
  /** No etcd member answered; nothing was written. */
  unavailable: 4,
  /** The commit's outcome could not be established: it may have landed (run `plan`). */
  unknown: 5,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
