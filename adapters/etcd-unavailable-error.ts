/** Codes of {@link EtcdUnavailableError}. */
export type EtcdUnavailableCode = "etcd-unavailable";

// etcd3's error classes keep `name` "Error": the class says which failure it was
const firstLine = (e: unknown) =>
  (e instanceof Error ? `${e.constructor.name}: ${e.message}` : String(e)).split("\n")[0] ?? "";

/**
 * No member of the cluster served a call within its budget (every one down, unreachable, without
 * a leader or timing out). Thrown only by idempotent calls, so nothing was written by it.
 */
export class EtcdUnavailableError extends Error {
  override readonly name = "EtcdUnavailableError";
  readonly code: EtcdUnavailableCode = "etcd-unavailable";
  constructor(
    /** What was being done, e.g. "read /edge/". */
    readonly operation: string,
    /** The last failure of each member that was tried, by endpoint. */
    readonly failures: ReadonlyMap<string, unknown>,
  ) {
    super(
      `no etcd member answered (${operation}): ${[...failures]
        .map(([endpoint, e]) => `${endpoint} → ${firstLine(e)}`)
        .join("; ")}`,
    );
  }
}
