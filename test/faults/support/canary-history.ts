import { setTimeout as sleep } from "node:timers/promises";
import type { IKeyValue } from "etcd3";
import {
  type Canary,
  type CanaryJudgement,
  CanaryJudgementSchema,
  CanarySchema,
} from "../../../core/index.js";
import type { MemberClients } from "./cluster-world.js";

/** The keys under a prefix at one revision: relative key → value. */
export type PrefixState = ReadonlyMap<string, string>;

/** One revision's changes under the prefix (`null`: deleted). */
export interface PrefixRevision {
  readonly rev: number;
  readonly changes: ReadonlyMap<string, string | null>;
}

/** A canary that ended, as etcd's history shows it. */
export interface CanaryEnd {
  readonly canary: Canary;
  /** The revision that removed `canary/current`. */
  readonly rev: number;
  /** `promote`: the same revision wrote the canary's intent; `ended`: the intent was left alone. */
  readonly how: "promote" | "ended";
  /** The judgement in etcd just before that revision (`null`: none, or not of this canary). */
  readonly judgement: CanaryJudgement | null;
}

const INTENT = /^(pool|country|continent)\//;

/**
 * The prefix at `startRev` and every revision after it up to now, from etcd's own history (a
 * watch of `root`, which holds the prefix, from `startRev + 1`, read through any live member
 * until a marker written under `root`, outside the prefix, arrives).
 */
export async function prefixHistory(
  mc: MemberClients,
  root: string,
  prefix: string,
  startRev: number,
): Promise<{ initial: PrefixState; revisions: PrefixRevision[] }> {
  const rel = (kv: IKeyValue) => kv.key.toString("utf8").slice(prefix.length);
  const initial = await mc.any(async (c) => {
    const res = await c.getAll().prefix(prefix).revision(String(startRev)).exec();
    return new Map(res.kvs.map((kv) => [rel(kv), kv.value.toString("utf8")]));
  });
  const marker = `${root}history-end`;
  const endRev = await mc.any(async (c) =>
    Number((await c.put(marker).value("end").exec()).header.revision),
  );
  const byRev = new Map<number, Map<string, string | null>>();
  await mc.any(async (c) => {
    byRev.clear();
    const watcher = await c
      .watch()
      .prefix(root)
      .startRevision(String(startRev + 1))
      .create();
    let last = 0;
    watcher.on("data", (res) => {
      for (const e of res.events) {
        const rev = Number(e.kv.mod_revision);
        last = Math.max(last, rev);
        if (!e.kv.key.toString("utf8").startsWith(prefix)) continue;
        const m = byRev.get(rev) ?? new Map<string, string | null>();
        m.set(rel(e.kv), e.type === "Delete" ? null : e.kv.value.toString("utf8"));
        byRev.set(rev, m);
      }
    });
    const deadline = Date.now() + 15_000;
    while (last < endRev && Date.now() < deadline) await sleep(50);
    await watcher.cancel();
    if (last < endRev) throw new Error(`the history watch reached revision ${last} of ${endRev}`);
  });
  const revisions = [...byRev]
    .sort(([a], [b]) => a - b)
    .map(([rev, changes]) => ({ rev, changes }));
  return { initial, revisions };
}

function decode<T>(text: string | undefined, parse: (v: unknown) => T): T | null {
  if (text === undefined) return null;
  try {
    return parse(JSON.parse(text));
  } catch {
    return null;
  }
}

const canaryOf = (s: PrefixState) => decode(s.get("canary/current"), (v) => CanarySchema.parse(v));
const judgementOf = (s: PrefixState) =>
  decode(s.get("canary/judgement"), (v) => CanaryJudgementSchema.parse(v));

/**
 * Why `state` is half-applied, or null: while `canary/current` exists, every key it changes must
 * still hold the value the canary started from (the stable intent never moves under a canary).
 */
export function canaryDisagreement(state: PrefixState): string | null {
  const canary = canaryOf(state);
  if (!canary) return null;
  for (const c of canary.changes) {
    const now = state.get(c.key) ?? null;
    if (now !== c.before)
      return `canary ${canary.id} started from ${c.key}=${c.before ?? "(absent)"} but it holds ${now ?? "(absent)"}`;
  }
  return null;
}

/**
 * Replays every revision of the prefix and judges §13's promises at each: while a canary runs,
 * its intent keys hold what it started from; an intent key changes only in the revision that
 * removes `canary/current`, and then every key the canary changes holds exactly its new value
 * (a promote); no other intent change. Returns the violations, the ended canaries (with the
 * judgement that stood just before each end) and how many revisions were checked.
 */
export function judgeCanaryHistory(
  initial: PrefixState,
  revisions: readonly PrefixRevision[],
): { violations: string[]; ends: CanaryEnd[]; checked: number } {
  const violations: string[] = [];
  const ends: CanaryEnd[] = [];
  const state = new Map(initial);
  const first = canaryDisagreement(state);
  if (first) violations.push(`at the start: ${first}`);
  for (const { rev, changes } of revisions) {
    const before = new Map(state);
    for (const [k, v] of changes) {
      if (v === null) state.delete(k);
      else state.set(k, v);
    }
    const wasCanary = canaryOf(before);
    const isCanary = canaryOf(state);
    const intentChanged = [...changes.keys()].filter(
      (k) => INTENT.test(k) && (before.get(k) ?? null) !== (state.get(k) ?? null),
    );
    if (wasCanary && !isCanary) {
      const judged = judgementOf(before);
      const judgement = judged?.id === wasCanary.id ? judged : null;
      if (intentChanged.length === 0) {
        ends.push({ canary: wasCanary, rev, how: "ended", judgement });
      } else {
        const wrong = wasCanary.changes.filter((c) => (state.get(c.key) ?? null) !== c.after);
        const stray = intentChanged.filter((k) => !wasCanary.changes.some((c) => c.key === k));
        if (wrong.length > 0 || stray.length > 0)
          violations.push(
            `rev ${rev}: canary ${wasCanary.id} ended half-applied (not its value: ${wrong.map((c) => c.key).join(",") || "-"}; not its keys: ${stray.join(",") || "-"})`,
          );
        ends.push({ canary: wasCanary, rev, how: "promote", judgement });
      }
    } else if (intentChanged.length > 0) {
      violations.push(
        `rev ${rev}: ${intentChanged.join(",")} changed without ending a canary (${wasCanary ? `canary ${wasCanary.id} running` : "no canary"})`,
      );
    }
    if (wasCanary && isCanary && wasCanary.id !== isCanary.id)
      violations.push(`rev ${rev}: canary ${isCanary.id} replaced ${wasCanary.id}`);
    const disagreement = canaryDisagreement(state);
    if (disagreement) violations.push(`rev ${rev}: ${disagreement}`);
  }
  return { violations, ends, checked: revisions.length };
}
