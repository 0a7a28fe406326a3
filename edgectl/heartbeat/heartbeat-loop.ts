import { setTimeout as sleep } from "node:timers/promises";
import { EtcdLeaseInvalidError } from "etcd3";
import type { HealthStatus } from "../../core/index.js";
import { ClusterLease } from "../etcd/cluster-lease.js";
import type { EtcdMembers } from "../etcd/etcd-members.js";
import { StatusHysteresis } from "./status-hysteresis.js";

/** One state change of the heartbeat, logged as one line. */
export interface HeartbeatEvent {
  readonly event:
    | "registered"
    | "status-changed"
    | "renew-failing"
    | "renew-recovered"
    | "lease-lost"
    | "register-failed"
    | "stopped";
  readonly pool: string;
  readonly status: HealthStatus;
  readonly lease?: string;
  readonly detail?: string;
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
  /** One HTTP check finished. */
  checked(ok: boolean): void;
  /** The lease is gone (a new registration follows). */
  leaseLost(): void;
}

/** What the heartbeat needs; the clock is injectable for tests. */
export interface HeartbeatDeps {
  readonly members: EtcdMembers;
  readonly key: string;
  readonly pool: string;
  readonly ttlSeconds: number;
  /** Check interval; renewals run at min(interval, ttl/3). */
  readonly intervalMs: number;
  /** The HTTP check, if any: true when the pool answered well. */
  readonly probe?: () => Promise<boolean>;
  readonly log: (e: HeartbeatEvent) => void;
  readonly observer?: HeartbeatObserver;
  readonly signal: AbortSignal;
  readonly now?: () => number;
}

/**
 * Keeps `health/POOL` alive on a lease until the signal aborts, then revokes the lease so the
 * pool drains at once. Renewal is one keepalive per tick on a lease that is never re-granted
 * while alive; each keepalive goes to the member that answered last and moves to the next one
 * when that fails, so a lost member or a leader change costs a retry, not the lease. When no
 * renewal succeeded for longer than the TTL (etcd has expired it by then) or etcd says the
 * lease is gone, a new lease is granted and the key re-put.
 */
export async function runHeartbeat(deps: HeartbeatDeps): Promise<void> {
  const now = deps.now ?? Date.now;
  const ttlMs = deps.ttlSeconds * 1000;
  const tickMs = Math.max(100, Math.min(deps.intervalMs, ttlMs / 3));
  const value = (s: HealthStatus) => JSON.stringify({ status: s });
  const observer = deps.observer;
  let hysteresis = new StatusHysteresis("healthy");
  if (deps.probe) {
    const ok = await deps.probe();
    observer?.checked(ok);
    hysteresis = new StatusHysteresis(ok ? "healthy" : "unhealthy");
  }
  observer?.status(hysteresis.status);

  const cur: { lease: ClusterLease | null } = { lease: null };
  let leaseId = "";
  let written: HealthStatus | null = null;
  let lastRenewal = 0;
  let renewFailing = false;
  let registerFailing = false;
  let probing: Promise<void> | null = null;
  let lastProbe = now();
  const emit = (event: HeartbeatEvent["event"], detail?: string, err?: unknown) =>
    deps.log({
      event,
      pool: deps.pool,
      status: hysteresis.status,
      ...(leaseId ? { lease: BigInt(leaseId).toString(16) } : {}),
      ...(detail ? { detail } : {}),
      ...(err !== undefined ? { err } : {}),
    });

  // one renewal round may use half the TTL, leaving the other half for the next round
  const renewBudgetMs = Math.max(500, ttlMs / 2);
  const put = (l: ClusterLease, status: HealthStatus) =>
    deps.members.any(`write ${deps.key}`, (c, call) =>
      c.put(deps.key).value(value(status)).lease(l.id).options(call).exec(),
    );

  const register = async () => {
    let l: ClusterLease | null = null;
    try {
      l = await ClusterLease.grant(deps.members, deps.ttlSeconds);
      const status = hysteresis.status;
      await put(l, status);
      cur.lease = l;
      leaseId = l.id;
      written = status;
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
  while (!deps.signal.aborted) {
    try {
      await sleep(tickMs, undefined, { signal: deps.signal });
    } catch {
      break;
    }
    const probe = deps.probe;
    if (probe && !probing && now() - lastProbe >= deps.intervalMs) {
      lastProbe = now();
      probing = probe().then((ok) => {
        observer?.checked(ok);
        const before = hysteresis.status;
        if (hysteresis.record(ok) !== before) {
          observer?.status(hysteresis.status);
          emit("status-changed", ok ? "check recovered" : "check failing");
        }
        probing = null;
      });
    }
    if (cur.lease) await renew(cur.lease);
    const held = cur.lease;
    if (!held) await register();
    else if (written !== hysteresis.status) {
      const status: HealthStatus = hysteresis.status;
      try {
        await put(held, status);
        written = status;
      } catch {
        // retried on the next tick; a lost lease shows up in renew()
      }
    }
  }
  if (probing) await probing;
  await cur.lease?.revoke({ budgetMs: 3000 }).catch(() => undefined);
  emit("stopped", "lease revoked");
}
