import type { Command } from "commander";
import { withEtcdMembers } from "../../adapters/etcd-members.js";
import {
  DEFAULT_HEARTBEAT_SECONDS,
  DEFAULT_PUSHER_LISTEN,
} from "../../adapters/pusher-defaults.js";
import {
  canaryReport,
  carriedState,
  compile,
  describeCanary,
  describeSlowPool,
  describeViewerShed,
  poolReports,
  viewerShedReports,
} from "../../core/index.js";
import { compileOptions } from "../cli/compile-options.js";
import { ExitCode } from "../cli/exit-codes.js";
import { readPrefixFromAny, toSnapshot } from "../etcd/read-prefix.js";
import type { CommandContext } from "../output/command-context.js";
import { StatusShape } from "../output/shapes/status-shape.js";
import { statusDocument } from "../output/status-document.js";
import { edgeSettling } from "../status/edge-settling.js";
import { openKvMaps } from "../status/kv-read.js";
import { evaluateSync, formatSync, type SyncInputs } from "../status/sync-status.js";

async function readPusher(url: string): Promise<NonNullable<SyncInputs["pusher"]>> {
  try {
    const res = await fetch(new URL("/status", url), { signal: AbortSignal.timeout(3000) });
    if (!res.ok) return { ok: false, error: `HTTP ${res.status} from ${url}/status` };
    const doc = (await res.json()) as {
      role?: unknown;
      pushed_revision?: unknown;
      epoch?: unknown;
    };
    return {
      ok: true,
      role: typeof doc.role === "string" ? doc.role : "unknown",
      pushedRevision: typeof doc.pushed_revision === "number" ? doc.pushed_revision : null,
      epoch: typeof doc.epoch === "number" ? doc.epoch : null,
    };
  } catch (e) {
    return { ok: false, error: `${url}: ${e instanceof Error ? e.message : String(e)}` };
  }
}

function heartbeatSeconds(env: Readonly<Record<string, string | undefined>>): number {
  const n = Number(env.HEARTBEAT_SECONDS ?? DEFAULT_HEARTBEAT_SECONDS);
  return Number.isFinite(n) && n > 0 ? n : DEFAULT_HEARTBEAT_SECONDS;
}

/** The pusher's address from `PUSHER_LISTEN` (a wildcard host is asked on loopback). */
export function defaultPusherUrl(env: Readonly<Record<string, string | undefined>>): string {
  const listen = env.PUSHER_LISTEN?.trim() || DEFAULT_PUSHER_LISTEN;
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(listen);
  if (!m) return `http://${DEFAULT_PUSHER_LISTEN}`;
  const host = m[1] === "0.0.0.0" ? "127.0.0.1" : m[1] === "[::]" ? "[::1]" : m[1];
  return `http://${host}:${m[2]}`;
}

/** `edgectl status`'s action (`edgectl/commands/status.ts` defines its arguments and options). */
export async function statusAction(
  ctx: CommandContext,
  opts: { pusher?: string | boolean },
  cmd: Command,
): Promise<void> {
  const settings = ctx.settings(cmd);
  const pusherUrl = typeof opts.pusher === "string" ? opts.pusher : defaultPusherUrl(ctx.io.env);
  // etcd's first: its connection and read travel while the pusher and KV are asked.
  const etcdRead = withEtcdMembers(settings, (members) =>
    readPrefixFromAny(members, settings.prefix),
  );
  const pusher = opts.pusher === false ? undefined : readPusher(pusherUrl);
  // Opened (not read) meanwhile: a local sink's Miniflare starts while etcd answers.
  const kvOpening = openKvMaps(ctx.io);
  try {
    const [read, reader] = await Promise.all([etcdRead, kvOpening]);
    // KV after etcd: a change landing in between can only make KV look newer, never behind.
    const kv = await reader.read();
    const { routes, meta } = kv;
    const snapshot = toSnapshot(read);
    const result = compile(snapshot, {
      ...compileOptions(settings, carriedState({ kv: routes })),
    });
    const compiled = result.map;
    // What the edge serves: the shares in KV's map (the compile's, when KV has none).
    const shedding = poolReports(result.state, routes ?? compiled).filter((r) => r.shed > 0);
    const viewerSheds = viewerShedReports(result.state, routes ?? compiled);
    const canary = canaryReport(result.state.canary, result.state.canaryJudgement, Date.now());
    const newestChange = Math.max(
      0,
      ...read.entries.filter((e) => e.rel !== "lock/apply").map((e) => e.modRevision),
    );
    const now = Date.now();
    const inputs: SyncInputs = {
      etcd: { revision: read.revision, epoch: compiled.epoch, newestChange, compiled },
      kv: { meta, routes, ...(kv.error ? { error: kv.error } : {}) },
      settling: edgeSettling(routes, now),
      // meta is rewritten at least every HEARTBEAT_SECONDS; two missed beats mean trouble.
      deadman: { now, maxAgeMs: 2 * heartbeatSeconds(ctx.io.env) * 1000 + 5_000 },
      ...(pusher ? { pusher: await pusher } : {}),
    };
    const verdict = evaluateSync(inputs);
    ctx.emit(statusDocument(inputs, verdict, shedding, viewerSheds, canary), {
      schema: StatusShape,
      text: (_r, paint) => [
        ...formatSync(inputs, verdict).map((l) =>
          l === "edge is on the current config"
            ? paint("green", l)
            : l === "edge is behind:"
              ? paint("red", l)
              : inputs.settling && l.startsWith("KV's routes were written")
                ? paint("yellow", l)
                : l,
        ),
        ...(shedding.length > 0
          ? [
              paint("yellow", "shedding pools:"),
              ...shedding.map((r) => `  ${r.pool}: ${describeSlowPool(r)}`),
            ]
          : []),
        ...(viewerSheds.length > 0
          ? [
              paint("yellow", "shed by viewers:"),
              ...viewerSheds.map((r) => `  ${describeViewerShed(r)}`),
            ]
          : []),
        ...(canary
          ? [paint(canary.state === "frozen" ? "red" : "yellow", describeCanary(canary))]
          : []),
      ],
    });
    ctx.exit(verdict.inSync ? ExitCode.ok : ExitCode.failure);
  } finally {
    // Closed on every path: a failed etcd read must not leave a local sink's Miniflare up.
    await (await kvOpening.catch(() => null))?.close();
  }
}
