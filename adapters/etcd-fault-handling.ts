import { ConsecutiveBreaker, circuitBreaker, handleWhen } from "cockatiel";
import { isRecoverableError } from "etcd3";

/**
 * A per-host circuit breaker for etcd3 that probes again after 500 ms. etcd3's default refuses
 * every call for 5 s after 3 failures, which delays the re-read (pusher) and the lease renewal
 * (heartbeat) by up to 5 s after etcd comes back.
 */
export function fastRecoveryBreaker() {
  return circuitBreaker(handleWhen(isRecoverableError), {
    halfOpenAfter: 500,
    breaker: new ConsecutiveBreaker(3),
  });
}
