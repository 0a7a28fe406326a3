import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { PusherStatus } from "./status.js";

/** The pusher's Prometheus metrics, in their own registry (no global state). */
export interface PusherMetrics {
  readonly registry: Registry;
  readonly pushes: Counter;
  readonly pushErrors: Counter;
  readonly driftRepairs: Counter;
  readonly historyResets: Counter;
  /** Watches given up and started again, by reason: `disconnected`, `cancelled`, `silent`. */
  readonly watchRestarts: Counter<"reason">;
  readonly writeDuration: Histogram;
  /** One full (paged) read of the prefix; and the core compile of it. */
  readonly rangeReadDuration: Histogram;
  readonly compileDuration: Histogram;
  /** Full reads of the prefix (one per compile, however many pages it took). */
  readonly rangeReads: Counter;
  /** Range requests those reads made (pages, restarts included). */
  readonly rangePages: Counter;
}

/** Creates the registry; gauges read `status` when scraped. */
export function createMetrics(status: PusherStatus): PusherMetrics {
  const registry = new Registry();
  const gauge = (name: string, help: string, read: () => number | null) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        const v = read();
        if (v !== null) this.set(v);
      },
    });
  gauge(
    "edge_pusher_pushed_revision",
    "etcd revision of the map last written to KV",
    () => status.pushedRevision,
  );
  gauge(
    "edge_pusher_etcd_revision",
    "newest etcd revision with routing state seen",
    () => status.etcdRevision,
  );
  gauge("edge_pusher_lag_seconds", "seconds since the oldest change not yet in KV", () =>
    status.lagSeconds(),
  );
  gauge("edge_pusher_lag_revisions", "etcd revision minus pushed revision", () =>
    status.lagRevisions(),
  );
  gauge(
    "edge_pusher_problems",
    "problems reported by the last compile",
    () => status.problems.length,
  );
  gauge(
    "edge_pusher_history",
    "etcd history compiled in (raised by a restore)",
    () => status.history,
  );
  gauge("edge_pusher_is_leader", "1 when this pusher is the elected writer", () =>
    status.role === "leader" ? 1 : 0,
  );
  return {
    registry,
    pushes: new Counter({
      name: "edge_pusher_pushes_total",
      help: "successful KV writes of routes and/or meta",
      registers: [registry],
    }),
    pushErrors: new Counter({
      name: "edge_pusher_push_errors_total",
      help: "failed KV writes (each is retried)",
      registers: [registry],
    }),
    driftRepairs: new Counter({
      name: "edge_pusher_drift_repairs_total",
      help: "reconciles that found KV different from etcd and rewrote it",
      registers: [registry],
    }),
    historyResets: new Counter({
      name: "edge_pusher_kv_history_resets_total",
      help: "times the pusher followed a new etcd history (etcd restored or replaced: revision went back, cluster id changed, or KV held a revision above etcd's) and rewrote KV",
      registers: [registry],
    }),
    watchRestarts: new Counter({
      name: "edge_pusher_watch_restarts_total",
      help: "watches re-listed and started again: disconnected, cancelled by etcd, or silent while the prefix moved (replaced on a new connection)",
      labelNames: ["reason"],
      registers: [registry],
    }),
    rangeReads: new Counter({
      name: "edge_pusher_range_reads_total",
      help: "full reads of the routing prefix (each feeds one compile; at most one per KV write slot under load)",
      registers: [registry],
    }),
    rangePages: new Counter({
      name: "edge_pusher_range_pages_total",
      help: "range requests (pages) made by those reads, each pinned to the read's first revision",
      registers: [registry],
    }),
    writeDuration: new Histogram({
      name: "edge_pusher_write_duration_seconds",
      help: "duration of KV writes",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    rangeReadDuration: new Histogram({
      name: "edge_pusher_range_read_seconds",
      help: "duration of one full read of the routing prefix (all its pages)",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    compileDuration: new Histogram({
      name: "edge_pusher_compile_seconds",
      help: "duration of the core compile of one read",
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
  };
}
