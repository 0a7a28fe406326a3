import { setTimeout as sleep } from "node:timers/promises";
import {
  Etcd3,
  EtcdAuthenticationFailedError,
  EtcdPermissionDeniedError,
  type IOptions,
} from "etcd3";
import { fastRecoveryBreaker } from "../adapters/etcd-fault-handling.js";
import {
  ETCD_GRPC_OPTIONS,
  type EtcdSettings,
  etcdClientOptions,
} from "../adapters/etcd-options.js";
import { cappedWatchBackoff } from "./backoff.js";
import { requireLeader } from "./require-leader.js";

/** Deadline for unary etcd calls, so a black-holed connection cannot hang a read. */
export const ETCD_CALL_TIMEOUT_MS = 5_000;
/** Deadline for the watch client's unary calls (the watch probe): a stuck member is left fast. */
export const WATCH_PROBE_TIMEOUT_MS = 1_500;

/**
 * An etcd3 client tuned for a long-running watcher: call deadlines (each retry gets a fresh one),
 * fast watch reconnects, gRPC reconnects capped at 1 s (its default backoff grows to 2 min, which
 * would hold the pusher off a member long after it came back), and `hasleader` on every call
 * and stream, so a member cut off from its peers is left within seconds.
 */
export function createEtcdClient(
  settings: EtcdSettings,
  extra: Partial<IOptions> = {},
  callTimeoutMs = ETCD_CALL_TIMEOUT_MS,
): Etcd3 {
  return new Etcd3({
    ...etcdClientOptions(settings),
    // Streams (watch, lease keepalive) must not get a deadline: it would end them.
    defaultCallOptions: (ctx) =>
      ctx.isStream
        ? { interceptors: [requireLeader] }
        : { deadline: Date.now() + callTimeoutMs, interceptors: [requireLeader] },
    faultHandling: {
      watchBackoff: cappedWatchBackoff(100, 2_000),
      host: fastRecoveryBreaker,
    },
    grpcOptions: {
      // The receive limit: pages of the prefix read and large values fit (etcd-options.ts).
      ...ETCD_GRPC_OPTIONS,
      // Notices a silently dead connection; etcd allows pings every 5 s or slower.
      "grpc.keepalive_time_ms": 10_000,
      "grpc.keepalive_timeout_ms": 5_000,
      "grpc.initial_reconnect_backoff_ms": 200,
      "grpc.max_reconnect_backoff_ms": 1_000,
    },
    ...extra,
  });
}

/**
 * The client the watch and its probe use, separate from the one for reads and leadership: a
 * probe that fails on a member resets that member's connections, which moves the watch too, and
 * a watch found silent is moved by replacing this client.
 */
export function createWatchClient(settings: EtcdSettings): Etcd3 {
  return createEtcdClient(settings, {}, WATCH_PROBE_TIMEOUT_MS);
}

/**
 * Resolves once etcd answers a read of the routing prefix; retries while it is unreachable and
 * rejects at once on what retrying cannot fix (bad credentials, no permission). It reads inside
 * the prefix because a least-privilege pusher may read nothing else. Stops when `signal` aborts.
 */
export async function waitEtcdReachable(
  client: Etcd3,
  prefix: string,
  signal: AbortSignal,
): Promise<void> {
  while (!signal.aborted) {
    try {
      await client
        .getAll()
        .prefix(prefix)
        .options({ deadline: Date.now() + 1_000 })
        .count();
      return;
    } catch (e) {
      if (!isTransient(e)) throw e;
      await sleep(250);
    }
  }
}

function isTransient(e: unknown): boolean {
  return !(e instanceof EtcdAuthenticationFailedError || e instanceof EtcdPermissionDeniedError);
}
