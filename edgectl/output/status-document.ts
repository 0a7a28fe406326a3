import type { CanaryReport, PoolReport, ViewerShedReport } from "../../core/index.js";
import type { SyncInputs, SyncVerdict } from "../status/sync-status.js";
import type { StatusResult } from "./shapes/status-shape.js";

const text = (v: unknown) => (typeof v === "string" ? v : null);

/** What `status` gathered and its verdict, as `-o json` shows it (`StatusShape`). */
export function statusDocument(
  x: SyncInputs,
  v: SyncVerdict,
  shedding: readonly PoolReport[] = [],
  viewerSheds: readonly ViewerShedReport[] = [],
  canary: CanaryReport | null = null,
): StatusResult {
  const { meta, routes } = x.kv;
  return {
    in_sync: v.inSync,
    behind: [...v.behind],
    etcd: {
      revision: x.etcd.revision,
      epoch: x.etcd.epoch,
      newest_change: x.etcd.newestChange,
    },
    kv: {
      // KV's meta is only checked for rev and epoch: the rest may be missing
      meta: meta
        ? {
            rev: meta.rev,
            epoch: meta.epoch,
            heartbeat_at: text(meta.heartbeat_at),
            pusher: text(meta.pusher),
          }
        : null,
      routes: routes ? { rev: routes.rev, epoch: routes.epoch } : null,
      error: x.kv.error ?? null,
      settling: x.settling
        ? { written_at: x.settling.writtenAt, settled_by: x.settling.settledBy }
        : null,
    },
    pusher: !x.pusher
      ? null
      : x.pusher.ok
        ? {
            ok: true,
            role: x.pusher.role,
            pushed_revision: x.pusher.pushedRevision,
            epoch: x.pusher.epoch,
          }
        : { ok: false, error: x.pusher.error },
    shedding: shedding.map((r) => ({ ...r, slow_ms: r.slow_ms ? { ...r.slow_ms } : null })),
    viewer_sheds: viewerSheds.map((r) => ({
      ...r,
      slow_ms: r.slow_ms ? { ...r.slow_ms } : null,
    })),
    canary,
  };
}
