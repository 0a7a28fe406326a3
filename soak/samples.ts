/**
 * What the soak records: one value of one figure of one series at one time. A series is one
 * process in one role (`pusher:soak-a#4242@leader`, `observer#4343`), `cluster` for figures of
 * the whole system (etcd leases and watchers, KV writes, the Worker's answers, `observed/` keys),
 * or `aggregator` for the Worker's Durable Object storage.
 */
export interface Sample {
  /** Seconds since the measured run started. */
  readonly t: number;
  readonly series: string;
  readonly figure: Figure;
  readonly value: number;
  /** Seconds since the process started (process series only). */
  readonly age?: number;
}

/** Every figure the soak records. */
export type Figure =
  /** Resident set size, MiB (/proc/PID/status VmRSS). */
  | "rss_mib"
  /** Anonymous resident memory, MiB (RssAnon: RSS less the mapped binary and libraries). */
  | "anon_mib"
  /**
   * V8's live heap, MiB: its heap used right after a full collection. For Node the latest one's
   * (`edge_pusher_heap_live_bytes`, `edge_heartbeat_heap_live_bytes`); for the Worker
   * (`worker:edge`) one the soak asks for over workerd's inspector.
   */
  | "heap_mib"
  /**
   * V8 heap used at the scrape, MiB (prom-client's nodejs_heap_size_used_bytes): live heap plus
   * the garbage since the last collection. Recorded, not judged: it saws.
   */
  | "heap_used_mib"
  /**
   * V8 heap committed, MiB (prom-client's nodejs_heap_size_total_bytes): what V8 holds for its
   * heap, used or not (not all of it need be resident). Recorded, not judged: a failed
   * `anon_mib` verdict says how much its rise was (growth-failure.ts).
   */
  | "heap_total_mib"
  /** Memory V8 tracks outside its heap (Buffers, ArrayBuffers: nodejs_external_memory_bytes), MiB. */
  | "external_mib"
  /** Open file descriptors (/proc/PID/fd). */
  | "fds"
  /**
   * Descriptors of an etcd member or the harness by what holds the other end
   * (`etcd:m0<-heartbeat`, `etcd:m0<-close-wait`…: socket-peers.ts). Recorded, not judged: it
   * tells which client an etcd member's growing `fds` belong to.
   */
  | "sockets"
  /**
   * An etcd member's descriptors less its connections to the other members (`sockets` other
   * than `<-peer`), counted in the same pass: what its clients, files and listeners hold.
   */
  | "fds_less_peers"
  /** libuv handles the process holds open (prom-client's nodejs_active_handles_total). */
  | "handles"
  /** Open `/ui/events` streams of a pusher (its edge_pusher_ui_streams). */
  | "ui_streams"
  /** Series of the process's /metrics (label sets; a histogram counts once: series-count.ts). */
  | "series"
  /** Leases etcd holds (its own metrics: granted − revoked, plus the initial count if exposed). */
  | "leases"
  /** `leases` less those of live boosts (each boost holds one for its TTL). */
  | "leases_held"
  /** Leases etcd lists (the LeaseLeases RPC), to check the metric. */
  | "leases_listed"
  /** Watchers registered on every running etcd member (etcd_debugging_mvcc_watcher_total). */
  | "watchers"
  /** gRPC watch streams on every running etcd member (etcd_debugging_mvcc_watch_stream_total). */
  | "watch_streams"
  /** KV writes (bulk PUTs the stand-in stored), cumulative. */
  | "kv_writes"
  /** Changes the driver made in etcd, cumulative. */
  | "changes"
  /** The Worker's answers with status 2xx, cumulative. */
  | "responses_2xx"
  /** The Worker's answers with any other status (or no answer), cumulative. */
  | "responses_other"
  /** `observed/` keys in etcd (`edgectl observe`'s, and any other). */
  | "observed_keys"
  /**
   * The Durable Object aggregator's databases as its objects see them, MiB: page count × page
   * size of every shard, what Cloudflare bills (`aggregator-storage.ts`).
   */
  | "do_storage_mib"
  /**
   * Its files under workerd's persist directory, MiB: every shard's SQLite file, WAL and shared
   * memory. Recorded, not judged: workerd's WAL fills to SQLite's checkpoint size first.
   */
  | "do_files_mib"
  /** Rows the aggregator's shards hold (one per minute, country and pool each). */
  | "do_rows"
  /** Minutes the aggregator holds: the current one less its oldest, plus one (it keeps 16). */
  | "do_minutes";

/** The process kind a series belongs to (the part before `:` or `#`). */
export function seriesKind(series: string): string {
  return series.split(/[:#]/)[0] ?? series;
}
