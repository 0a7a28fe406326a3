import type { ObserveFailureCode } from "./observe-failure.js";

/** Why the observer is not well, on `/status` (`null` when it is). */
export type ObserverReason =
  | ObserveFailureCode
  /** etcd refused or did not answer a write of an `observed/` key. */
  | "etcd-failing"
  /** No poll has succeeded yet. */
  | "starting";

/** `GET /status` on the observer's listener (docs/reference.md §12). */
export interface ObserverStatusDocument {
  readonly status: "ok" | "failing";
  readonly reason: ObserverReason | null;
  readonly detail: string | null;
  /** The edge's origin (never the token). */
  readonly edge: string;
  readonly last_success: string | null;
  readonly consecutive_failures: number;
  /** Whether the observer's keys are held under a live lease. */
  readonly registered: boolean;
  readonly observed_keys: number;
  /** True after the edge failed for longer than the staleness limit: the keys were let go. */
  readonly released: boolean;
}

/** The observer's own health, as `/status` shows it. */
export class ObserverStatus {
  reason: ObserverReason | null = "starting";
  detail: string | null = null;
  lastSuccess: number | null = null;
  failures = 0;
  registered = false;
  keys = 0;
  released = false;

  constructor(private readonly edge: string) {}

  document(): ObserverStatusDocument {
    return {
      status: this.reason === null ? "ok" : "failing",
      reason: this.reason,
      detail: this.detail,
      edge: this.edge,
      last_success: this.lastSuccess === null ? null : new Date(this.lastSuccess).toISOString(),
      consecutive_failures: this.failures,
      registered: this.registered,
      observed_keys: this.keys,
      released: this.released,
    };
  }
}
