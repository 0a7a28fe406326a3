import {
  Etcd3,
  EtcdAuthenticationFailedError,
  EtcdPermissionDeniedError,
  type IOptions,
} from "etcd3";
import { fastRecoveryBreaker } from "../adapters/etcd-fault-handling.js";
import { type EtcdSettings, etcdClientOptions } from "../adapters/etcd-options.js";
import { cappedWatchBackoff } from "./backoff.js";

/** Deadline for unary etcd calls, so a black-holed connection cannot hang a read. */
export const ETCD_CALL_TIMEOUT_MS = 5_000;

/** An etcd3 client tuned for a long-running watcher: call deadlines, fast watch reconnects. */
export function createEtcdClient(settings: EtcdSettings, extra: Partial<IOptions> = {}): Etcd3 {
  return new Etcd3({
    ...etcdClientOptions(settings),
    // Streams (watch, lease keepalive) must not get a deadline: it would end them.
    defaultCallOptions: (ctx) =>
      ctx.isStream ? {} : { deadline: Date.now() + ETCD_CALL_TIMEOUT_MS },
    faultHandling: {
      watchBackoff: cappedWatchBackoff(100, 2_000),
      host: fastRecoveryBreaker,
    },
    grpcOptions: {
      // Notices a silently dead connection; etcd allows pings every 5 s or slower.
      "grpc.keepalive_time_ms": 10_000,
      "grpc.keepalive_timeout_ms": 5_000,
    },
    ...extra,
  });
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
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

function isTransient(e: unknown): boolean {
  return !(e instanceof EtcdAuthenticationFailedError || e instanceof EtcdPermissionDeniedError);
}
