import type { Etcd3 } from "etcd3";
import type { Logger } from "pino";
import type { KvSink } from "../adapters/kv/kv-sink.js";
import type { BackoffPolicy } from "./backoff.js";
import type { Clock } from "./clock.js";
import type { PusherConfig } from "./config.js";
import type { PusherMetrics } from "./metrics.js";
import type { PusherStatus } from "./status.js";
import type { RoutingView } from "./ui/routing-view.js";

/** The parts of the configuration the loop uses (see `PusherConfig`). */
export type PusherLoopConfig = Pick<
  PusherConfig,
  | "prefix"
  | "originTemplate"
  | "floorPool"
  | "heartbeatSeconds"
  | "resyncSeconds"
  | "electionKey"
  | "electionTtl"
  | "pusherId"
  | "shedRecoverSeconds"
>;

/** Internal knobs, shortened by tests. */
export interface PusherTuning {
  /** Minimum spacing of writes to one KV key (`KV_WRITE_SPACING_MS`: Workers KV's 1 s plus jitter). */
  readonly minWriteIntervalMs?: number;
  readonly kvBackoff?: BackoffPolicy;
  /** `/readyz` fails when etcd is unreachable or KV failing for longer than this (30 s). */
  readonly unhealthyAfterMs?: number;
  /** How often the watch guard reads the prefix's version (1 s). */
  readonly probeIntervalMs?: number;
  /** How long the watch may owe a change before it is replaced (2 s). */
  readonly watchSilenceMs?: number;
  /** Strings never to show in `/status` (e.g. the API token). */
  readonly secrets?: readonly string[];
  /** How far behind a KV read may be (Workers KV: about 60 s; `KV_STALE_READ_MS`). */
  readonly kvStaleReadMs?: number;
}

/** Dependencies of the pusher, passed explicitly. */
export interface PusherDeps {
  readonly etcd: Etcd3;
  /**
   * Opens the client the watch and its probe use; a silent watch is moved by closing it and
   * opening another. Without it the watch shares `etcd` and is only re-created on it.
   */
  readonly openWatchClient?: () => Etcd3;
  readonly kv: KvSink;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly config: PusherLoopConfig;
  readonly tuning?: PusherTuning;
  /**
   * Takes no part in the election and always writes (`KV_SINK=file`: each host's pusher writes
   * its own snapshot files).
   */
  readonly solo?: boolean;
  /**
   * Told when a piece of work ended and nothing else waits: a compile with nothing to write
   * (a standby's, or one that changed nothing), or a KV write with no change or read behind it.
   * The idle heap trim runs its due trims there, not just before the next change.
   */
  readonly onIdle?: () => void;
}

/** A running pusher. */
export interface Pusher {
  readonly status: PusherStatus;
  readonly metrics: PusherMetrics;
  /** The last compiled map, for `/ui`. */
  readonly routing: RoutingView;
  /** Campaigns, reads, watches and writes until stopped. */
  start(): void;
  /** Graceful stop: stop watching, flush (bounded), resign. Does not close etcd or KV. */
  stop(opts?: { readonly flushTimeoutMs?: number }): Promise<void>;
  /** Stops without flushing or resigning, as a crash would (tests). */
  abandon(): Promise<void>;
  /** Forces a full reconcile with KV now (what the RESYNC_SECONDS timer does). */
  resync(): void;
}
