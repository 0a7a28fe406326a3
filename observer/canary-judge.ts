import { EtcdLeaseInvalidError, type IKeyValue } from "etcd3";
import {
  type Canary,
  type CanaryJudgement,
  CanarySchema,
  parseBoundedJson,
  safeText,
} from "../core/index.js";
import { ClusterLease } from "../edgectl/etcd/cluster-lease.js";
import type { EtcdMembers } from "../edgectl/etcd/etcd-members.js";
import { canaryFigures } from "./canary-figures.js";
import { judgeGates } from "./canary-verdict.js";
import type { MinuteReading } from "./minute-reading.js";

/** How often an unchanged judgement is written again: well inside `CANARY_JUDGEMENT_STALE_MS`. */
export const JUDGEMENT_REFRESH_MS = 20_000;

/** How the judge ends a canary: through edgectl's commit (lock, epoch CAS, audit record). */
export type CanaryEnder = (
  how: "promote" | "rollback",
  id: string,
  reason: string,
) => Promise<{ readonly epoch: number; readonly revision: number }>;

/** What the judge reports, one event per change. */
export type CanaryJudgeEvent =
  | { readonly event: "canary-judged"; readonly canary: string; readonly detail: string }
  | { readonly event: "canary-standby"; readonly canary: string; readonly detail: string }
  | {
      readonly event: "canary-rolled-back" | "canary-promoted";
      readonly canary: string;
      readonly detail: string;
    }
  | {
      readonly event: "canary-end-failed" | "canary-judge-failing";
      readonly canary?: string;
      readonly detail: string;
      readonly err?: unknown;
    };

/** The judge's part of the observer's `/status`. */
export interface CanaryJudgeView {
  /** `judge`: this observer judges the running canary; `standby`: another one does. */
  readonly role: "none" | "judge" | "standby";
  /** The running canary's share (percent) and `--for` (seconds); `null` without one. */
  readonly share: number | null;
  readonly for_s: number | null;
  readonly judgement: CanaryJudgement | null;
}

/** The judge's view while no canary runs. */
export const NO_CANARY: CanaryJudgeView = {
  role: "none",
  share: null,
  for_s: null,
  judgement: null,
};

/** What the judge needs. */
export interface CanaryJudgeDeps {
  readonly members: EtcdMembers;
  /** The full keys of `canary/current` and `canary/judgement`. */
  readonly canaryKey: string;
  readonly judgementKey: string;
  readonly ttlSeconds: number;
  /** Who judges, as the judgement names it (host, process, edge). */
  readonly judge: string;
  readonly end: CanaryEnder;
  readonly log: (e: CanaryJudgeEvent) => void;
  readonly now?: () => number;
}

/**
 * The observer's judge of the running canary (docs/reference.md §13). Each poll it reads
 * `canary/current` and `canary/judgement`; when no other observer's lease holds the judgement,
 * it compares both sides over the same countries and minutes, writes the judgement under its own
 * lease (so the judgement goes with the judge and the canary freezes), and ends the canary:
 * rolled back by the first failing gate, promoted once the gates have held for the canary's
 * `for_s`. Ending is edgectl's commit (`lock/apply`, the epoch CAS, the audit record, and the
 * canary's id checked), so exactly one actor can end a canary, once.
 */
export class CanaryJudge {
  private lease: ClusterLease | null = null;
  private judgedId: string | null = null;
  private passingSince: number | null = null;
  private view: CanaryJudgeView = NO_CANARY;
  private lastEvent = "";
  /** The judgement last written, and when: rewritten on a change of verdict, else as a heartbeat. */
  private written: { readonly j: CanaryJudgement; readonly at: number } | null = null;

  constructor(private readonly deps: CanaryJudgeDeps) {}

  /** The judge's state for `/status`. */
  get status(): CanaryJudgeView {
    return this.view;
  }

  /**
   * One round: judges the running canary on `reading` (a failed poll, `null`, judges nothing:
   * the judgement ages, and a stale one freezes the canary). Throws what etcd throws.
   */
  async tick(reading: MinuteReading | null): Promise<void> {
    const now = (this.deps.now ?? Date.now)();
    const { current, judgement } = await this.read();
    const canary = current ? decodeCanary(current) : null;
    const ours =
      judgement !== undefined && this.lease !== null && judgement.lease === this.lease.id;
    if (!canary) {
      if (ours) await this.deleteJudgement();
      this.forget();
      return;
    }
    if (judgement !== undefined && !ours && judgement.lease !== "0") {
      this.forget();
      this.view = { role: "standby", share: canary.share, for_s: canary.for_s, judgement: null };
      this.report({
        event: "canary-standby",
        canary: canary.id,
        detail: `another observer holds ${this.deps.judgementKey} and judges canary ${canary.id}`,
      });
      return;
    }
    if (this.judgedId !== canary.id) {
      this.judgedId = canary.id;
      this.passingSince = null;
    }
    if (!reading) return;
    const figures = canaryFigures(reading, canary);
    const gates = judgeGates(figures, canary.gates);
    this.passingSince = gates.verdict === "passing" ? (this.passingSince ?? now) : null;
    const written: CanaryJudgement = {
      id: canary.id,
      verdict: gates.verdict,
      judged_at: new Date(now).toISOString(),
      passing_since: this.passingSince === null ? null : new Date(this.passingSince).toISOString(),
      canary: figures.canary,
      stable: figures.stable,
      countries: figures.countries.slice(0, 300),
      minutes: figures.minutes,
      detail: gates.detail.slice(0, 1024),
      judge: this.deps.judge.slice(0, 256),
    };
    if (!ours || this.needsWrite(written, now)) {
      if (!(await this.write(written, judgement !== undefined))) {
        this.forget();
        this.view = { role: "standby", share: canary.share, for_s: canary.for_s, judgement: null };
        return;
      }
      this.written = { j: written, at: now };
    }
    this.view = { role: "judge", share: canary.share, for_s: canary.for_s, judgement: written };
    this.report({
      event: "canary-judged",
      canary: canary.id,
      detail: `${gates.verdict}: ${gates.detail}`,
    });
    if (gates.verdict === "failing") {
      await this.end(canary, "rollback", `rolled back by its judge: ${gates.detail}`);
    } else if (this.passingSince !== null && now - this.passingSince >= canary.for_s * 1000) {
      await this.end(
        canary,
        "promote",
        `promoted by its judge: the gates held for ${canary.for_s} s: ${gates.detail}`,
      );
    }
  }

  /**
   * Whether `next` is worth an etcd write (each wakes every pusher): a new canary, verdict or
   * passing clock, or the last write {@link JUDGEMENT_REFRESH_MS} old, so a live judge's
   * judgement never looks stale.
   */
  private needsWrite(next: CanaryJudgement, now: number): boolean {
    const w = this.written;
    return (
      w === null ||
      w.j.id !== next.id ||
      w.j.verdict !== next.verdict ||
      w.j.passing_since !== next.passing_since ||
      now - w.at >= JUDGEMENT_REFRESH_MS
    );
  }

  /** Revokes the judge's lease: its judgement goes at once. */
  async revoke(): Promise<void> {
    const lease = this.lease;
    this.lease = null;
    await lease?.revoke({ budgetMs: 3000 }).catch(() => undefined);
  }

  private async end(canary: Canary, how: "promote" | "rollback", reason: string): Promise<void> {
    try {
      const ended = await this.deps.end(how, canary.id, reason);
      this.deps.log({
        event: how === "promote" ? "canary-promoted" : "canary-rolled-back",
        canary: canary.id,
        detail: `${reason} (epoch ${ended.epoch}, revision ${ended.revision})`,
      });
      await this.deleteJudgement();
      this.forget();
    } catch (e) {
      this.deps.log({
        event: "canary-end-failed",
        canary: canary.id,
        detail: `cannot ${how} canary ${canary.id}; trying again next poll`,
        err: e,
      });
    }
  }

  private forget(): void {
    this.written = null;
    this.judgedId = null;
    this.passingSince = null;
    this.view = NO_CANARY;
  }

  private report(e: CanaryJudgeEvent): void {
    const key = `${e.event}|${"canary" in e ? e.canary : ""}|${e.event === "canary-judged" ? e.detail.split(":")[0] : ""}`;
    if (key === this.lastEvent) return;
    this.lastEvent = key;
    this.deps.log(e);
  }

  private async read(): Promise<{
    current: IKeyValue | undefined;
    judgement: IKeyValue | undefined;
  }> {
    const { canaryKey, judgementKey } = this.deps;
    const [current, judgement] = await Promise.all(
      [canaryKey, judgementKey].map((key) =>
        this.deps.members
          .any(`read ${key}`, (c, call) => c.get(key).options(call).exec())
          .then((r) => r.kvs[0]),
      ),
    );
    return { current, judgement };
  }

  /**
   * Writes the judgement under this judge's lease, only while the key is absent or already this
   * lease's: false when another judge took it in between.
   */
  private async write(j: CanaryJudgement, exists: boolean): Promise<boolean> {
    const key = this.deps.judgementKey;
    const value = JSON.stringify(j);
    for (let attempt = 0; attempt < 2; attempt++) {
      const lease = this.lease ?? (await this.grant());
      try {
        const res = await this.deps.members.any(`write ${key}`, (c, call) =>
          (exists && attempt === 0
            ? c.if(key, "Lease", "==", lease.id)
            : c.if(key, "Create", "==", 0)
          )
            .then(c.put(key).value(value).lease(lease.id))
            .options(call)
            .commit(),
        );
        return res.succeeded;
      } catch (e) {
        if (!(e instanceof EtcdLeaseInvalidError)) throw e;
        this.lease?.stop();
        this.lease = null;
        exists = false;
      }
    }
    return false;
  }

  private async grant(): Promise<ClusterLease> {
    const lease = await ClusterLease.grant(this.deps.members, this.deps.ttlSeconds);
    lease.keepAlive();
    this.lease = lease;
    return lease;
  }

  private async deleteJudgement(): Promise<void> {
    const lease = this.lease;
    if (!lease) return;
    const key = this.deps.judgementKey;
    await this.deps.members.any(`delete ${key}`, (c, call) =>
      c.if(key, "Lease", "==", lease.id).then(c.delete().key(key)).options(call).commit(),
    );
  }
}

function decodeCanary(kv: IKeyValue): Canary | null {
  const parsed = parseBoundedJson(kv.value.toString("utf8"));
  const canary = parsed.ok ? CanarySchema.safeParse(parsed.value) : null;
  return canary?.success ? canary.data : null;
}

/** The judge's name in a judgement: host and process, and the edge it reads (never the token). */
export function judgeName(host: string, pid: number, edge: string): string {
  return safeText(`${host}:${pid} observing ${edge}`, 256);
}
