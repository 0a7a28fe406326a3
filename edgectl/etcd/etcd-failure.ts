import { BrokenCircuitError } from "cockatiel";
import {
  ClientClosedError,
  ClientRuntimeError,
  EtcdAuthenticationFailedError,
  EtcdError,
  EtcdInvalidAuthTokenError,
  EtcdLeaseInvalidError,
  EtcdPermissionDeniedError,
  EtcdUserNotFoundError,
  GRPCGenericError,
} from "etcd3";

const ETCD_FAILURES = [
  GRPCGenericError,
  EtcdError,
  EtcdAuthenticationFailedError,
  EtcdInvalidAuthTokenError,
  EtcdPermissionDeniedError,
  EtcdUserNotFoundError,
  EtcdLeaseInvalidError,
  ClientRuntimeError,
  ClientClosedError,
  BrokenCircuitError,
];

/** Whether `e` is a failure of etcd3 (or of its circuit breaker) that edgectl reports in one line. */
export function isEtcdFailure(e: unknown): e is Error {
  return ETCD_FAILURES.some((cls) => e instanceof cls);
}
