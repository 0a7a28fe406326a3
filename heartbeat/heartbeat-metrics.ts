import { Counter, collectDefaultMetrics, Gauge, Registry } from "prom-client";
import { registerLiveHeapGauge } from "../adapters/live-heap.js";
import { VERSION } from "../adapters/version.js";
import { type HealthStatus, HealthStatusSchema } from "../core/index.js";
import type { HeartbeatObserver } from "./heartbeat-loop.js";
import type { ProbeOutcome, ProbeResult } from "./http-probe.js";

/** Every way a check fails, each a `reason` of `edge_heartbeat_check_failures_total` from the start. */
const FAILURE_REASONS: readonly Exclude<ProbeOutcome, "ok">[] = [
  "status",
  "timeout",
  "refused",
  "dns",
  "tls",
  "reset",
  "unreachable",
  "other",
];

/**
 * `edgectl heartbeat --listen`'s Prometheus metrics, in their own registry: the status the
 * check decided, whether the key is registered, the last renewal, check failures, lost leases and
 * registrations, the published p90 and the etcd writes, each labelled with the pool, plus the
 * process metrics.
 */
export class HeartbeatMetrics implements HeartbeatObserver {
  readonly registry = new Registry();
  private readonly statusGauge: Gauge<"pool" | "status">;
  private readonly registeredGauge: Gauge<"pool">;
  private readonly lastRenewal: Gauge<"pool">;
  private readonly checkFailures: Counter<"pool" | "reason">;
  private readonly checkStatus: Gauge<"pool">;
  private readonly leasesLost: Counter<"pool">;
  private readonly registrations: Counter<"pool">;
  private readonly p90: Gauge<"pool">;
  private readonly samples: Gauge<"pool">;
  private readonly writes: Counter<"pool">;

  constructor(
    private readonly pool: string,
    private readonly now: () => number = Date.now,
  ) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    registerLiveHeapGauge(this.registry, "edge_heartbeat");
    new Gauge({
      name: "edge_heartbeat_build_info",
      help: "always 1; the label says which version runs",
      labelNames: ["version"],
      registers,
    }).set({ version: VERSION }, 1);
    this.statusGauge = new Gauge({
      name: "edge_heartbeat_status",
      help: "1 for the status the heartbeat publishes in health/POOL (healthy, draining, unhealthy), 0 for the others",
      labelNames: ["pool", "status"],
      registers,
    });
    this.registeredGauge = new Gauge({
      name: "edge_heartbeat_registered",
      help: "1 while health/POOL is written under a live lease, 0 before the first registration and after a lost lease",
      labelNames: ["pool"],
      registers,
    });
    this.lastRenewal = new Gauge({
      name: "edge_heartbeat_last_renewal_timestamp_seconds",
      help: "Unix time of the last successful lease renewal (or registration); 0 before the first",
      labelNames: ["pool"],
      registers,
    });
    this.checkFailures = new Counter({
      name: "edge_heartbeat_check_failures_total",
      help: "failed HTTP checks (--check-url), by reason: status (an answer other than 2xx/3xx), timeout, or the connection's failure (refused, dns, tls, reset, unreachable, other)",
      labelNames: ["pool", "reason"],
      registers,
    });
    this.checkStatus = new Gauge({
      name: "edge_heartbeat_check_http_status",
      help: "the HTTP status the last check got; 0 when it got no answer (timed out or its connection failed); no series before the first check",
      labelNames: ["pool"],
      registers,
    });
    this.leasesLost = new Counter({
      name: "edge_heartbeat_lease_lost_total",
      help: "leases lost (etcd said it is gone, or no renewal for longer than the TTL); each is followed by a new registration",
      labelNames: ["pool"],
      registers,
    });
    this.registrations = new Counter({
      name: "edge_heartbeat_registrations_total",
      help: "leases granted and health/POOL written: the first registration and every re-registration",
      labelNames: ["pool"],
      registers,
    });
    this.p90 = new Gauge({
      name: "edge_heartbeat_p90_ms",
      help: "the p90 the checker publishes, in ms: of its last probes' times to first byte, or the check URL's own p90_ms (no series before the first check answers)",
      labelNames: ["pool"],
      registers,
    });
    this.samples = new Gauge({
      name: "edge_heartbeat_p90_samples",
      help: "probes behind edge_heartbeat_p90_ms (at most 20; 0 while the check URL reports its own p90_ms)",
      labelNames: ["pool"],
      registers,
    });
    this.writes = new Counter({
      name: "edge_heartbeat_etcd_writes_total",
      help: "writes of the health key to etcd: registrations, status changes and p90 moves of more than 10 % and 50 ms",
      labelNames: ["pool"],
      registers,
    });
    const labels = { pool };
    this.writes.inc(labels, 0);
    this.registeredGauge.set(labels, 0);
    this.lastRenewal.set(labels, 0);
    for (const reason of FAILURE_REASONS) this.checkFailures.inc({ pool, reason }, 0);
    this.leasesLost.inc(labels, 0);
    this.registrations.inc(labels, 0);
  }

  status(status: HealthStatus): void {
    for (const s of HealthStatusSchema.options) {
      this.statusGauge.set({ pool: this.pool, status: s }, s === status ? 1 : 0);
    }
  }

  registered(): void {
    this.registrations.inc({ pool: this.pool });
    this.registeredGauge.set({ pool: this.pool }, 1);
    this.renewed();
  }

  renewed(): void {
    this.lastRenewal.set({ pool: this.pool }, this.now() / 1000);
  }

  checked(result: ProbeResult): void {
    this.checkStatus.set({ pool: this.pool }, result.status ?? 0);
    if (result.outcome !== "ok")
      this.checkFailures.inc({ pool: this.pool, reason: result.outcome });
  }

  latency(p90Ms: number, samples: number): void {
    this.p90.set({ pool: this.pool }, p90Ms);
    this.samples.set({ pool: this.pool }, samples);
  }

  wrote(): void {
    this.writes.inc({ pool: this.pool });
  }

  leaseLost(): void {
    this.leasesLost.inc({ pool: this.pool });
    this.registeredGauge.set({ pool: this.pool }, 0);
  }
}
