import type { Etcd3 } from "etcd3";
import type { MemberClients } from "./cluster-world.js";
import type { CommittedChange } from "./kv-latency.js";
import { LIVE_POOLS } from "./operator-loops.js";

/** Per attempt: short, so a member that hangs during an election costs little of the figure. */
const ATTEMPT_MS = 400;

/**
 * Routing changes the scenario commits itself, through whichever member answers: `override/JP`
 * flips between the live pools (no lease, `expires_at` an hour ahead), so each one changes the map.
 * Each is a compare-and-put on the key's mod revision: an attempt that timed out but landed makes
 * the retry's compare fail, and the key then shows the revision it landed at, so the measured
 * revision is always the change's own (a blind retry would commit an identical map at a later
 * revision that KV never needs to show).
 */
export class ProbeWriter {
  readonly changes: CommittedChange[] = [];
  private k = 0;
  private modRev = "0";

  constructor(
    private readonly mc: MemberClients,
    private readonly prefix: string,
  ) {}

  /** Commits the next change; resolves once a member acknowledged it (or showed it landed). */
  async change(label: string, avoid?: ReadonlySet<number>): Promise<CommittedChange> {
    const k = this.k++;
    const key = `${this.prefix}override/JP`;
    const value = JSON.stringify({
      primary: LIVE_POOLS[k % 3],
      fallbacks: [LIVE_POOLS[(k + 1) % 3]],
      reason: `probe ${k}`,
      expires_at: new Date(Date.now() + 3_600_000).toISOString(),
    });
    const rev = await this.mc.any(
      async (c: Etcd3) => {
        const deadline = () => ({ deadline: Date.now() + ATTEMPT_MS });
        const res = await c
          .if(key, "Mod", "==", this.modRev)
          .then(c.put(key).value(value))
          .options(deadline())
          .commit();
        if (res.succeeded) return res.header.revision;
        const now = await c.get(key).options(deadline()).exec();
        const kv = now.kvs[0];
        if (kv && kv.value.toString("utf8") === value) return kv.mod_revision;
        throw new Error(`override/JP changed under the probe (mod ${kv?.mod_revision ?? "none"})`);
      },
      20_000,
      avoid,
    );
    this.modRev = rev;
    const change = { label, rev: Number(rev), at: Date.now() };
    this.changes.push(change);
    return change;
  }
}
