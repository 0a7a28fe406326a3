import type { Logger } from "pino";
import type { KvSink } from "../adapters/kv/kv-sink.js";
import type { CompiledMap } from "../core/index.js";
import type { BackoffPolicy } from "./backoff.js";
import type { Clock } from "./clock.js";
import type { PusherMetrics } from "./metrics.js";
import type { PusherStatus } from "./status.js";

/** What the scheduler needs; intervals are injectable so tests run fast. */
export interface WriteSchedulerOptions {
  readonly kv: KvSink;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: PusherMetrics;
  readonly status: PusherStatus;
  readonly pusherId: string;
  /** Checked right before every KV call: leader with a fresh lease. */
  readonly canWrite: () => boolean;
  /** Clock time after which a write in flight is aborted (the leadership write window). */
  readonly writeDeadline: () => number;
  /** Workers KV allows one write per second per key. */
  readonly minIntervalMs: number;
  readonly heartbeatMs: number;
  readonly backoff: BackoffPolicy;
  /** How far behind a KV read may be (default `KV_STALE_READ_MS`, Cloudflare's 60 s). */
  readonly staleReadMs?: number;
  /**
   * Receives the `routes` map found in KV on activation (the last known good). Returns true when
   * it starts a compile seeded with it (its last valid rules): nothing is written until that
   * compile is submitted, so a compile that landed during the read never reaches KV.
   */
  readonly onLoaded: (map: CompiledMap | null) => boolean;
  /**
   * Told once per KV map ordered after the newest compile: usually another leader's newer write,
   * but possibly a map from an older etcd history, or from a history another pusher already
   * moved to. The caller checks against a fresh read and moves its history if need be.
   */
  readonly onKvAhead?: (kvMap: CompiledMap) => void;
  /** A write finished or failed: the next write slot's time is known again (`nextWriteAt`). */
  readonly onWriteSettled?: () => void;
}
