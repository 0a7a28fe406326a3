import { EventEmitter } from "node:events";
import type { Clock } from "./clock.js";
import type { Leadership, LeadershipEvents } from "./leadership.js";

/** What the loop needs of its writer role: the election's, or `SoloLeadership`'s. */
export interface WriterRole
  extends Pick<Leadership, "canWrite" | "writeDeadline" | "start" | "resign" | "abandon"> {
  on<E extends keyof LeadershipEvents>(
    event: E,
    listener: (...args: LeadershipEvents[E]) => void,
  ): unknown;
}

/** How long one write of snapshot files may take before it is abandoned and retried. */
const SOLO_WRITE_WINDOW_MS = 60_000;

/**
 * The writer role of a pusher that takes no part in the election (`KV_SINK=file`: one pusher per
 * host writes that host's snapshot files): elected at start, until stopped.
 */
export class SoloLeadership extends EventEmitter<LeadershipEvents> implements WriterRole {
  private leader = false;

  constructor(private readonly clock: Clock) {
    super();
  }

  canWrite(): boolean {
    return this.leader;
  }

  writeDeadline(): number {
    return this.leader ? this.clock.now() + SOLO_WRITE_WINDOW_MS : 0;
  }

  start(): void {
    if (this.leader) return;
    this.leader = true;
    queueMicrotask(() => this.emit("elected"));
  }

  async resign(): Promise<void> {
    this.stop("resigned");
  }

  async abandon(): Promise<void> {
    this.stop("abandoned");
  }

  private stop(reason: string): void {
    if (!this.leader) return;
    this.leader = false;
    this.emit("demoted", reason);
  }
}
