/** `propagation_ms` and `edge_propagation_ms` in results.json. */
export interface PropagationResult {
  readonly propagation_ms: {
    readonly p50: number;
    readonly p99: number;
    readonly max: number;
    /** The relay floor: etcd put → the relay's value visible to the same poller, p50. */
    readonly floor_p50: number;
    readonly floor_p99: number;
    readonly ratio_p50: number;
    /**
     * The change's time over the relay's in the same iteration, median over the changes timed at
     * KV, with its 95 % interval: what the goal is judged on (the host's drift cancels in a pair).
     */
    readonly ratio_paired_p50?: number;
    readonly ratio_paired_ci95?: readonly [number, number];
    /** Inside the relay floor: put → the relay's watch event, and the relay's KV put, p50. */
    readonly floor_relay_watch_p50: number;
    readonly floor_relay_put_p50: number;
    /**
     * The relay that also reads the routing prefix before its put, as the pusher must (a delta
     * read: the watch is only a trigger), p50; information, the goal stays against the relay.
     */
    readonly read_relay_p50?: number;
    /** The change's time over the reading relay's in the same iteration: median and interval. */
    readonly read_relay_paired_p50?: number;
    readonly read_relay_paired_ci95?: readonly [number, number];
    /** A raw watch and a raw KV put from the bench's process, each timed alone, p50 of the sum. */
    readonly floor_parts_p50: number;
    readonly floor_etcd_watch_p50: number;
    readonly floor_kv_put_p50: number;
    /** put → the pusher's own "push" log line (no polling in the figure). */
    readonly logged_p50: number;
    /** KV reads by the poller that failed (Miniflare racing a writer) and were retried. */
    readonly read_errors: number;
    /** `routes` writes the pusher logged during the measurement (one per change when none is extra). */
    readonly routes_writes: number;
    /** The pusher's warning and error lines during the measurement, by message. */
    readonly pusher_warnings: Readonly<Record<string, number>>;
    readonly changes: number;
  };
  readonly edge_propagation_ms: {
    readonly p50: number;
    readonly p99: number;
    readonly max: number;
    /** The slowest change's push as the pusher logged it: late there, or late in the Worker? */
    readonly max_push_logged: number;
    readonly ratio_p50: number;
  };
}
