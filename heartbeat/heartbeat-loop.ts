import { setTimeout as sleep } from "node:timers/promises";
import { EtcdLeaseInvalidError } from "etcd3";
import { ClusterLease, leaseHex } from "../adapters/cluster-lease.js";
import type { EtcdMembers } from "../adapters/etcd-members.js";
import type { HealthStatus } from "../core/index.js";
import type { ProbeOutcome, ProbeResult } from "./http-probe.js";
import { LatencyWindow } from "./latency-window.js";
import { healthValue, needsRewrite, type PublishedHealth } from "./published-health.js";
import { StatusHysteresis } from "./status-hysteresis.js";

/** One state change of the heartbeat, logged as one line. */
export interface HeartbeatEvent {
  readonly event:
    | "registered"
    | "check-failed"
    | "status-changed"
    | "p90-changed"
    | "renew-failing"
    | "renew-recovered"
    | "lease-lost"
    | "register-failed"
    | "stopped";
  readonly pool: string;
  /** The checker's name, with `--checker`. */
  readonly checker?: string;
  readonly status: HealthStatus;
  /** The p90 the key holds (or is about to), once there is one. */
  readonly p90_ms?: number;
  readonly lease?: string;
  readonly detail?: string;
  /** With a check's failure or a status change: how that check went (`ProbeOutcome`). */
  readonly check?: ProbeOutcome;
  /** With `check`: the HTTP status it got, when it got an answer. */
  readonly http_status?: number;
  /** The error behind a failing renewal or registration. */
  readonly err?: unknown;
}

/** What `--listen`'s metrics need to see (`HeartbeatMetrics`); every call is cheap. */
export interface HeartbeatObserver {
  /** The status the heartbeat publishes (at start and on every change). */
  status(status: HealthStatus): void;
  /** A lease was granted and the key written. */
  registered(): void;
  /** A keepalive succeeded. */
  renewed(): void;
  /** One HTTP check finished: how it went. */
  checked(result: ProbeResult): void;
  /** The p90 the checker publishes now, and the probes behind it (0 for a reported figure). */
  latency(p90Ms: number, samples: number): void;
  /** The health key was written to etcd (a registration or a rewrite). */
  wrote(): void;
  /** The lease is gone (a new registration follows). */
  leaseLost(): void;
}

/** What the heartbeat needs; the clock is injectable for tests. */
export interface HeartbeatDeps {
  readonly members: EtcdMembers;
  readonly key: string;
  readonly pool: string;
  /** `--checker NAME`: the key is the checker's own and carries `samples`. */
  readonly checker?: string;
  readonly ttlSeconds: number;
  /** Check interval; renewals run at min(interval, ttl/3). */
  readonly intervalMs: number;
  /** The HTTP check, if any: whether the pool answered well, and how fast. */
  readonly probe?: () => Promise<ProbeResult>;
  readonly log: (e: HeartbeatEvent) => void;
  readonly observer?: HeartbeatObserver;
  readonly signal: AbortSignal;
  readonly now?: () => number;
}

/**
 * Keeps `health/POOL` (or `health/POOL/CHECKER`) alive on a lease until the signal aborts, then
 * revokes the lease so the pool drains at once. With a check, the key also carries the p90 of
 * the last probes' times to first byte (`LatencyWindow.published`, or the check URL's own
 * `p90_ms`), and is rewritten only when the status changes or that p90 moves by more than 10 %
 * and more than `P90_REWRITE_MIN_MS` (`needsRewrite`). Renewal is one keepalive per tick on a lease that is never re-granted
 * while alive; each keepalive goes to the member that answered last and moves to the next one
 * when that fails, so a lost member or a leader change costs a retry, not the lease. When no
 * renewal succeeded for longer than the TTL (etcd has expired it by then) or etcd says the
 * lease is gone, a new lease is granted and the key re-put.
 */
export async function runHeartbeat(deps: HeartbeatDeps): Promise<void> {
  const now = deps.now ?? Date.now;
  const ttlMs = deps.ttlSeconds * 1000;
  const tickMs = Math.max(100, Math.min(deps.intervalMs, ttlMs / 3));
  const withSamples = deps.checker !== undefined;
  const observer = deps.observer;
  const latencies = new LatencyWindow();
  let reported: number | undefined;
  const took = (r: ProbeResult) => {
    observer?.checked(r);
    // An answer other than 2xx/3xx, or a failed connection, says the pool is failing, not how
    // fast it serves. A timeout says both: the pool is at least that slow, and the URL's own
    // figure no longer speaks for it.
    if (r.latencyMs === undefined) return;
    latencies.add(r.latencyMs);
    reported = r.ok ? r.reportedP90Ms : undefined;
    const p90 = reported ?? latencies.published();
    if (p90 !== null) observer?.latency(p90, reported === undefined ? latencies.count : 0);
  };
  let hysteresis = new StatusHysteresis("healthy");
  let first: ProbeResult | undefined;
  if (deps.probe) {
    let r = await deps.probe();
    // The process's first request pays for a cold HTTP client and a new connection (hundreds of
    // ms on a busy host): it only warms up, and the next one is the first sample.
    // It never decides the status either: on a loaded host it can time out where the next one
    // does not, and one failure would register a healthy pool as unhealthy.
    r = await deps.probe();
    took(r);
    first = r;
    hysteresis = new StatusHysteresis(r.ok ? "healthy" : "unhealthy");
  }
  observer?.status(hysteresis.status);
  const current = (): PublishedHealth => {
    const p90 = reported ?? latencies.published();
    if (p90 === null) return { status: hysteresis.status };
    return reported === undefined
      ? { status: hysteresis.status, p90Ms: p90, samples: latencies.count }
      : { status: hysteresis.status, p90Ms: p90 };
  };

  const cur: { lease: ClusterLease | null } = { lease: null };
  let leaseId = "";
  let written: PublishedHealth | null = null;
  let lastRenewal = 0;
  let renewFailing = false;
  let registerFailing = false;
  let probing: Promise<void> | null = null;
  let lastProbe = now();
  const emit = (
    event: HeartbeatEvent["event"],
    detail?: string,
    err?: unknown,
    check?: ProbeResult,
  ) =>
    deps.log({
      event,
      pool: deps.pool,
      ...(deps.checker !== undefined ? { checker: deps.checker } : {}),
      status: hysteresis.status,
      ...(written?.p90Ms !== undefined ? { p90_ms: written.p90Ms } : {}),
      ...(leaseId ? { lease: leaseHex(leaseId) } : {}),
      ...(detail ? { detail } : {}),
      ...(err !== undefined ? { err } : {}),
      ...(check ? { check: check.outcome } : {}),
      ...(check?.status !== undefined ? { http_status: check.status } : {}),
    });
  // A failed check is logged when the one before it did not fail the same way: the first of a
  // run of failures, and each change in how they fail.
  let lastFailure: string | null = null;
  const noteCheck = (r: ProbeResult) => {
    if (r.ok) lastFailure = null;
    else if (r.detail !== lastFailure) {
      lastFailure = r.detail;
      emit("check-failed", r.detail, undefined, r);
    }
  };

  // one renewal round may use half the TTL, leaving the other half for the next round
  const renewBudgetMs = Math.max(500, ttlMs / 2);
  const put = async (l: ClusterLease, h: PublishedHealth) => {
    await deps.members.any(`write ${deps.key}`, (c, call) =>
      c.put(deps.key).value(healthValue(h, withSamples)).lease(l.id).options(call).exec(),
    );
    observer?.wrote();
  };

  const register = async () => {
    let l: ClusterLease | null = null;
    try {
      l = await ClusterLease.grant(deps.members, deps.ttlSeconds);
      const h = current();
      await put(l, h);
      cur.lease = l;
      leaseId = l.id;
      written = h;
      lastRenewal = now();
      renewFailing = false;
      registerFailing = false;
      observer?.registered();
      emit("registered");
    } catch (e) {
      // a lease whose key may not have been written must not linger
      l?.revoke({ budgetMs: renewBudgetMs }).catch(() => undefined);
      if (!registerFailing) emit("register-failed", undefined, e);
      registerFailing = true;
    }
  };

  const renew = async (l: ClusterLease) => {
    try {
      // a keepalive waits at most a third of the TTL on one member before trying the next
      await l.keepaliveOnce(Math.max(300, ttlMs / 3), { budgetMs: renewBudgetMs });
      lastRenewal = now();
      observer?.renewed();
      if (renewFailing) emit("renew-recovered");
      renewFailing = false;
    } catch (e) {
      const gone = e instanceof EtcdLeaseInvalidError;
      if (gone || now() - lastRenewal > ttlMs) {
        // best effort: if etcd still has it (a leader change extends TTLs) it must not linger
        l.revoke({ budgetMs: renewBudgetMs }).catch(() => undefined);
        cur.lease = null;
        written = null;
        observer?.leaseLost();
        emit(
          "lease-lost",
          gone ? "etcd says the lease is gone" : `no renewal for over ${deps.ttlSeconds}s`,
        );
        leaseId = "";
      } else if (!renewFailing) {
        renewFailing = true;
        emit("renew-failing", undefined, e);
      }
    }
  };

  await register();
  if (first) noteCheck(first);
  // A finished probe wakes the loop, so its result is published at once, not a tick later.
  let wake = new AbortController();
  let lastTick = now();
  while (!deps.signal.aborted) {
    try {
      await sleep(Math.max(0, lastTick + tickMs - now()), undefined, {
        signal: AbortSignal.any([deps.signal, wake.signal]),
      });
    } catch {
      if (deps.signal.aborted) break;
    }
    if (wake.signal.aborted) wake = new AbortController();
    if (now() - lastTick >= tickMs) {
      lastTick = now();
      const probe = deps.probe;
      if (probe && !probing && now() - lastProbe >= deps.intervalMs) {
        lastProbe = now();
        probing = probe().then((r) => {
          took(r);
          noteCheck(r);
          const ok = r.ok;
          const before = hysteresis.status;
          if (hysteresis.record(ok) !== before) {
            observer?.status(hysteresis.status);
            emit(
              "status-changed",
              ok ? "check recovered" : `check failing: ${r.detail}`,
              undefined,
              r,
            );
          }
          probing = null;
          wake.abort();
        });
      }
      if (cur.lease) await renew(cur.lease);
      if (!cur.lease) {
        await register();
        continue;
      }
    }
    const held = cur.lease;
    if (held) {
      const h = current();
      const before: PublishedHealth | null = written;
      if (needsRewrite(before, h)) {
        try {
          await put(held, h);
          written = h;
          if (before?.status === h.status) emit("p90-changed", `was ${before.p90Ms ?? "none"}`);
        } catch {
          // retried on the next tick; a lost lease shows up in renew()
        }
      }
    }
  }
  if (probing) await probing;
  await cur.lease?.revoke({ budgetMs: 3000 }).catch(() => undefined);
  emit("stopped", "lease revoked");
}
