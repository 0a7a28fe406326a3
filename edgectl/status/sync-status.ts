import { type CompiledMap, escapeUnsafe, type MapMeta, sameRouting } from "../../core/index.js";
import { type EdgeSettling, formatSettling } from "./edge-settling.js";

/** What `edgectl status` gathered; `null` fields were absent or unreachable. */
export interface SyncInputs {
  readonly etcd: {
    readonly revision: number;
    readonly epoch: number;
    /** Newest mod revision among the routing keys that exist (the lock excluded). */
    readonly newestChange: number;
    /** A fresh compile of the same read, with KV's `routes` as the previous map. */
    readonly compiled: CompiledMap;
  };
  readonly kv: {
    readonly meta: MapMeta | null;
    readonly routes: CompiledMap | null;
    readonly error?: string;
  };
  /** KV's `routes` is so recent that some locations may still serve the previous map. */
  readonly settling?: EdgeSettling | null;
  /** The dead-man's switch: `meta.heartbeat_at` older than `maxAgeMs` at `now` means behind. */
  readonly deadman?: { readonly now: number; readonly maxAgeMs: number };
  /** The pusher's `/status`, or why it could not be read; absent when not checked. */
  readonly pusher?:
    | {
        readonly ok: true;
        readonly role: string;
        readonly pushedRevision: number | null;
        readonly epoch: number | null;
      }
    | { readonly ok: false; readonly error: string };
}

/** The verdict: in sync, or every reason it is not. */
export interface SyncVerdict {
  readonly inSync: boolean;
  readonly behind: readonly string[];
}

/**
 * The edge is on the current config when KV's `meta` carries etcd's epoch and a revision at or
 * after the newest routing key (the revision the pusher confirmed `routes` against), KV's
 * `routes` routes exactly like a fresh compile (`sameRouting`: this catches deletions, which
 * leave no mod revision behind; its own `rev` is where routing last changed, older is fine), and
 * a reachable leader pusher has pushed at least that revision.
 */
export function evaluateSync(x: SyncInputs): SyncVerdict {
  const behind: string[] = [];
  const { etcd, kv, pusher } = x;
  if (kv.error) behind.push(`KV unreadable: ${kv.error}`);
  else if (!kv.meta) behind.push("KV has no meta: nothing was ever pushed");
  else {
    if (kv.meta.epoch !== etcd.epoch)
      behind.push(`KV meta.epoch ${kv.meta.epoch} ≠ etcd epoch ${etcd.epoch}`);
    const beat = Date.parse(kv.meta.heartbeat_at);
    if (x.deadman && !(x.deadman.now - beat <= x.deadman.maxAgeMs))
      behind.push(
        `KV meta heartbeat_at ${kv.meta.heartbeat_at} is older than ${x.deadman.maxAgeMs / 1000} s: is the pusher running?`,
      );
    if (kv.meta.rev < etcd.newestChange)
      behind.push(
        `KV meta.rev ${kv.meta.rev} < newest routing change at revision ${etcd.newestChange}`,
      );
  }
  if (!kv.error) {
    if (!kv.routes) behind.push("KV has no valid routes map");
    else if (!sameRouting(kv.routes, etcd.compiled))
      behind.push(
        "KV routes differ from a fresh compile of etcd (a change or deletion is not pushed yet)",
      );
  }
  if (pusher && !pusher.ok) behind.push(`pusher unreachable: ${pusher.error}`);
  if (pusher?.ok && pusher.role === "leader") {
    if (pusher.pushedRevision === null || pusher.pushedRevision < etcd.newestChange)
      behind.push(
        `pusher pushed revision ${pusher.pushedRevision ?? "none"} < ${etcd.newestChange}`,
      );
  }
  return { inSync: behind.length === 0, behind };
}

/**
 * The small table `edgectl status` prints, then the verdict. KV's `meta` and the pusher's answer
 * are text from outside: control and invisible characters are escaped, newlines too.
 */
export function formatSync(x: SyncInputs, v: SyncVerdict): string[] {
  const row = (a: string, rev: string, epoch: string, note: string) =>
    escapeUnsafe(`${a.padEnd(18)}${rev.padEnd(10)}${epoch.padEnd(8)}${note}`.trimEnd());
  const lines = [row("", "revision", "epoch", "")];
  lines.push(
    row(
      "etcd",
      String(x.etcd.revision),
      String(x.etcd.epoch),
      `newest routing change at ${x.etcd.newestChange}`,
    ),
  );
  if (x.kv.error) lines.push(row("KV meta", "-", "-", "unreadable"));
  else if (!x.kv.meta) lines.push(row("KV meta", "-", "-", "absent"));
  else
    lines.push(
      row(
        "KV meta",
        String(x.kv.meta.rev),
        String(x.kv.meta.epoch),
        `heartbeat ${x.kv.meta.heartbeat_at} by ${x.kv.meta.pusher}`,
      ),
    );
  if (x.kv.routes)
    lines.push(
      row("KV routes", String(x.kv.routes.rev), String(x.kv.routes.epoch), "routing last changed"),
    );
  if (x.pusher?.ok)
    lines.push(
      row(
        `pusher (${x.pusher.role})`,
        String(x.pusher.pushedRevision ?? "-"),
        String(x.pusher.epoch ?? "-"),
        "",
      ),
    );
  else if (x.pusher) lines.push(row("pusher", "-", "-", "unreachable"));
  lines.push("");
  if (v.inSync) lines.push("edge is on the current config");
  else lines.push("edge is behind:", ...v.behind.map((b) => `  - ${escapeUnsafe(b)}`));
  if (x.settling) lines.push(formatSettling(x.settling, x.deadman?.now ?? Date.now()));
  return lines;
}
