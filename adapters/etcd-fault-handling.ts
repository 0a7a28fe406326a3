import { BrokenCircuitError, ConsecutiveBreaker, circuitBreaker, handleWhen } from "cockatiel";
import { GRPCResourceExhastedError, isRecoverableError } from "etcd3";

/**
 * A per-host circuit breaker for etcd3 that probes again after 500 ms. etcd3's default refuses
 * every call for 5 s after 3 failures, which delays the re-read (pusher) and the lease renewal
 * (heartbeat) by up to 5 s after etcd comes back. A message over the receive limit says nothing
 * about the member (the paged read asks again with fewer keys), so it does not count.
 */
export function fastRecoveryBreaker() {
  const memberFault = (e: Error) =>
    isRecoverableError(e) && !(e instanceof GRPCResourceExhastedError);
  return circuitBreaker(handleWhen(memberFault), {
    halfOpenAfter: 500,
    breaker: new ConsecutiveBreaker(3),
  });
}

/**
 * True when an error says "this member did not serve the call" rather than "etcd refused it":
 * the member is down, unreachable, without a leader, timed out or behind an open circuit. Another
 * member may serve the same call; permission, validation and lease errors are answers, not this.
 */
export function isMemberFailure(e: unknown): boolean {
  if (typeof e !== "object" || e === null) return false;
  return e instanceof BrokenCircuitError || (e instanceof Error && isRecoverableError(e));
}
