import type { Etcd3 } from "etcd3";
import type { MemberClients } from "./cluster-world.js";
import type { CommittedChange } from "./kv-latency.js";
import { LIVE_POOLS } from "./operator-loops.js";

/**
 * Routing changes the scenario commits itself, through whichever member answers: `override/JP`
 * flips between the live pools (no lease, `expires_at` an hour ahead), so each one changes the map.
 * A put that timed out may still land and be repeated elsewhere: the value is the same, so it is
 * harmless, and the acknowledged revision is the one measured.
 */
export class ProbeWriter {
  readonly changes: CommittedChange[] = [];
  private k = 0;

  constructor(
    private readonly mc: MemberClients,
    private readonly prefix: string,
  ) {}

  /** Commits the next change; resolves once a member acknowledged it. */
  async change(label: string, avoid?: ReadonlySet<number>): Promise<CommittedChange> {
    const k = this.k++;
    const value = JSON.stringify({
      primary: LIVE_POOLS[k % 3],
      fallbacks: [LIVE_POOLS[(k + 1) % 3]],
      reason: `probe ${k}`,
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const res = await this.mc.any(
      (c: Etcd3) => c.put(`${this.prefix}override/JP`).value(value).exec(),
      20_000,
      avoid,
    );
    const change = { label, rev: Number(res.header.revision), at: Date.now() };
    this.changes.push(change);
    return change;
  }
}
