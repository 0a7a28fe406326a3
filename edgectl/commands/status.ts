import { Command } from "commander";
import { type CommandContext, withCommonOptions } from "../cli/command-context.js";
import { ExitCode } from "../cli/exit-codes.js";
import type { SyncInputs } from "../status/sync-status.js";

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
  const n = Number(env.HEARTBEAT_SECONDS ?? "60");
  return Number.isFinite(n) && n > 0 ? n : 60;
}

/** The pusher's address from `PUSHER_LISTEN` (a wildcard host is asked on loopback). */
export function defaultPusherUrl(env: Readonly<Record<string, string | undefined>>): string {
  const listen = env.PUSHER_LISTEN?.trim() || "127.0.0.1:9464";
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(listen);
  if (!m) return "http://127.0.0.1:9464";
  const host = m[1] === "0.0.0.0" ? "127.0.0.1" : m[1] === "[::]" ? "[::1]" : m[1];
  return `http://${host}:${m[2]}`;
}

/** `edgectl status [--pusher URL]`: is the edge on the current config? 0 in sync, 1 behind. */
export function statusCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("status"))
    .description(
      "compare etcd with the pusher's /status and KV meta: is the edge on the current config?",
    )
    .option("--pusher <url>", "the pusher's HTTP address (default: from PUSHER_LISTEN)")
    .option("--no-pusher", "do not ask the pusher (judge by KV alone)")
    .action(async (opts: { pusher?: string | boolean }, cmd: Command) => {
      const settings = ctx.settings(cmd);
      const pusherUrl =
        typeof opts.pusher === "string" ? opts.pusher : defaultPusherUrl(ctx.io.env);
      // Loaded when the command runs, so `--help` and the other commands do not pay for them.
      // etcd's first: its connection and read travel while the KV sink and the rest load.
      const [{ readPrefixFromAny, toSnapshot }, { withEtcdMembers }] = await Promise.all([
        import("../etcd/read-prefix.js"),
        import("../etcd/etcd-members.js"),
      ]);
      const etcdRead = withEtcdMembers(settings, (members) =>
        readPrefixFromAny(members, settings.prefix),
      );
      // Asked now, not before etcd3 loads: its 3 s deadline is for the pusher, not for loading.
      const pusher = opts.pusher === false ? undefined : readPusher(pusherUrl);
      // Opened (not read) meanwhile: a local sink's Miniflare starts while etcd answers.
      const kvOpening = import("../status/kv-read.js").then(({ openKvMaps }) => openKvMaps(ctx.io));
      try {
        const [
          { carriedState, compile, describeSlowPool, poolReports },
          { compileOptions },
          { evaluateSync, formatSync },
          { edgeSettling },
          { statusDocument },
          { StatusShape },
          read,
          reader,
        ] = await Promise.all([
          import("../../core/index.js"),
          import("../cli/compile-options.js"),
          import("../status/sync-status.js"),
          import("../status/edge-settling.js"),
          import("../output/status-document.js"),
          import("../output/shapes/status-shape.js"),
          etcdRead,
          kvOpening,
        ]);
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
        ctx.emit(statusDocument(inputs, verdict, shedding), {
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
          ],
        });
        ctx.exit(verdict.inSync ? ExitCode.ok : ExitCode.failure);
      } finally {
        // Closed on every path: a failed etcd read must not leave a local sink's Miniflare up.
        await (await kvOpening.catch(() => null))?.close();
      }
    });
}
