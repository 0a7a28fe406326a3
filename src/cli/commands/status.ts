import { Command } from "commander";
import { type CompiledMap, compile, type MapMeta, parseMap } from "../../core/index.js";
import { type CommandContext, withCommonOptions } from "../command-context.js";
import { compileOptions } from "../compile-options.js";
import { readPrefix, toSnapshot, withEtcd } from "../etcd-client.js";
import { ExitCode } from "../exit-codes.js";
import { evaluateSync, formatSync, type SyncInputs } from "../sync-status.js";

function parseMeta(text: string | null): MapMeta | null {
  if (text === null) return null;
  try {
    const m = JSON.parse(text) as Partial<MapMeta>;
    return typeof m.rev === "number" && typeof m.epoch === "number" ? (m as MapMeta) : null;
  } catch {
    return null;
  }
}

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

/** `edgectl status [--pusher URL]`: is the edge on the current config? 0 in sync, 1 behind. */
export function statusCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("status"))
    .description(
      "compare etcd with the pusher's /status and KV meta: is the edge on the current config?",
    )
    .option("--pusher <url>", "the pusher's HTTP address", "http://127.0.0.1:9464")
    .option("--no-pusher", "do not ask the pusher (judge by KV alone)")
    .action(async (opts: { pusher: string | false }, cmd: Command) => {
      const settings = ctx.settings(cmd);
      // Loaded on demand: Miniflare and the Cloudflare SDK are heavy, and only status needs them.
      const { createKvSink, kvSettingsFromEnv } = await import("../../adapters/kv/kv-factory.js");
      const kvSettings = kvSettingsFromEnv(ctx.io.env, { cwd: ctx.io.cwd ?? process.cwd() });
      const read = await withEtcd(settings, (client) => readPrefix(client, settings.prefix));
      let routes: CompiledMap | null = null;
      let meta: MapMeta | null = null;
      let kvError: string | undefined;
      const pusher = opts.pusher === false ? undefined : readPusher(opts.pusher);
      try {
        const sink = await createKvSink(kvSettings, {});
        try {
          const [r, m] = await Promise.all([sink.get("routes"), sink.get("meta")]);
          routes = r === null ? null : parseMap(r);
          meta = parseMeta(m);
        } finally {
          await sink.close();
        }
      } catch (e) {
        kvError = e instanceof Error ? e.message : String(e);
      }
      const snapshot = toSnapshot(read);
      const compiled = compile(snapshot, { ...compileOptions(settings), previous: routes }).map;
      const newestChange = Math.max(
        0,
        ...read.entries.filter((e) => e.rel !== "lock/apply").map((e) => e.modRevision),
      );
      const inputs: SyncInputs = {
        etcd: { revision: read.revision, epoch: compiled.epoch, newestChange, compiled },
        kv: { meta, routes, ...(kvError ? { error: kvError } : {}) },
        // meta is rewritten at least every HEARTBEAT_SECONDS; two missed beats mean trouble.
        deadman: { now: Date.now(), maxAgeMs: 2 * heartbeatSeconds(ctx.io.env) * 1000 + 5_000 },
        ...(pusher ? { pusher: await pusher } : {}),
      };
      const verdict = evaluateSync(inputs);
      ctx.print(...formatSync(inputs, verdict));
      ctx.exit(verdict.inSync ? ExitCode.ok : ExitCode.failure);
    });
}
