import { hostname } from "node:os";
import { ConfigError } from "../adapters/errors.js";
import { type IdleHeapTrim, startIdleHeapTrim } from "../adapters/idle-heap-trim.js";
import { createKvSink } from "../adapters/kv/index.js";
import { type KvSettings, kvSettingsFromEnv } from "../adapters/kv/kv-settings.js";
import type { KvSink } from "../adapters/kv/kv-sink.js";
import { ownSignals } from "../adapters/own-signals.js";
import { serviceNotifier } from "../adapters/systemd-notify.js";
import { systemClock } from "./clock.js";
import { helpText, type PusherConfig, pusherConfigFromEnv } from "./config.js";
import { createEtcdClient, createWatchClient, waitEtcdReachable } from "./etcd-client.js";
import { startStatusServer } from "./http-server.js";
import { createPusher } from "./pusher.js";
import { createPusherLogger } from "./pusher-logger.js";
import { createUiHandler } from "./ui/ui-handler.js";

/**
 * How long startup waits for etcd before starting anyway. Exiting instead would make a service
 * manager's restart loop give up during a long etcd outage; running, the pusher retries and its
 * `/readyz` says it cannot reach etcd (`/livez` stays 200).
 */
const CONNECT_PATIENCE_MS = 5_000;
/** How long shutdown waits for the pending KV write. */
const FLUSH_TIMEOUT_MS = 5_000;
/** The idle heap trim's CPU window waits this long after the last piece of work. */
const TRIM_HOLD_AFTER_WORK_MS = 3_000;

function fail(message: string): never {
  process.stderr.write(`edge-pusher: ${message.replace(/\s*\n\s*/g, " ")}\n`);
  process.exit(1);
}

function describe(e: unknown): string {
  if (e instanceof ConfigError) return e.message;
  return e instanceof Error ? e.message : String(e);
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  if (args.includes("--help") || args.includes("-h")) {
    process.stdout.write(helpText());
    return;
  }
  if (args.length > 0) fail(`unknown argument "${args[0]}" (see --help)`);

  // A stop requested during startup is remembered and honoured once the pusher can flush.
  let stopRequested: string | null = null;
  let onStop = (signal: string) => {
    stopRequested ??= signal;
  };
  ownSignals(["SIGTERM", "SIGINT"], (signal) => onStop(signal));

  const env = process.env;
  let config: PusherConfig;
  let kvSettings: KvSettings;
  try {
    // KV first: a template's placeholder is named before any file the template points at is read.
    kvSettings = kvSettingsFromEnv(env, { cwd: process.cwd() });
    config = pusherConfigFromEnv(env, { hostname: hostname(), pid: process.pid });
  } catch (e) {
    fail(describe(e));
  }
  let etcd: ReturnType<typeof createEtcdClient>;
  try {
    etcd = createEtcdClient(config.etcd);
  } catch (e) {
    fail(describe(e));
  }
  const logger = createPusherLogger({ level: env.LOG_LEVEL || "info", instance: config.pusherId });

  const probing = new AbortController();
  const reachable = waitEtcdReachable(etcd, config.prefix, probing.signal);
  const refused = (e: unknown) =>
    fail(`etcd at ${config.etcd.endpoints.join(",")} refused the pusher: ${describe(e)}`);
  let patience: NodeJS.Timeout | undefined;
  const early = await Promise.race([
    reachable.then(() => true, refused),
    new Promise<false>((r) => {
      patience = setTimeout(() => r(false), CONNECT_PATIENCE_MS);
    }),
  ]);
  clearTimeout(patience);
  if (!early) {
    logger.warn(
      { etcd: config.etcd.endpoints },
      "etcd not reachable yet; starting anyway and retrying (/readyz turns 503 after 30 s)",
    );
    reachable.then(() => {
      if (!probing.signal.aborted) logger.info("etcd reachable");
    }, refused);
  }

  let kv: KvSink;
  try {
    kv = await createKvSink(kvSettings, { logger });
  } catch (e) {
    etcd.close();
    fail(`cannot open the ${kvSettings.kind} KV sink: ${describe(e)}`);
  }

  // what the log must never show, wherever it came from (variable or systemd credential)
  const secrets = [
    kvSettings.kind === "cloudflare" ? kvSettings.apiToken.reveal() : undefined,
    config.etcd.password,
  ].filter((s): s is string => Boolean(s));
  let trim: IdleHeapTrim | null = null;
  const pusher = createPusher({
    etcd,
    openWatchClient: () => createWatchClient(config.etcd),
    kv,
    logger,
    clock: systemClock,
    config,
    tuning: { secrets },
    solo: kvSettings.kind === "file",
    onIdle: () => trim?.workDone(),
  });

  let server: Awaited<ReturnType<typeof startStatusServer>>;
  try {
    server = await startStatusServer({
      host: config.listen.host,
      port: config.listen.port,
      status: pusher.status,
      metrics: pusher.metrics,
      ui: createUiHandler({
        status: pusher.status,
        routing: pusher.routing,
        registry: pusher.metrics.registry,
      }),
      allowedHosts: config.allowedHosts,
    });
  } catch (e) {
    await kv.close().catch(() => {});
    etcd.close();
    fail(`cannot listen on ${config.listen.host}:${config.listen.port}: ${describe(e)}`);
  }

  logger.info(
    {
      pusher: config.pusherId,
      prefix: config.prefix,
      sink: kvSettings.kind,
      listen: `${config.listen.host}:${server.port}`,
      etcd: config.etcd.endpoints,
    },
    "pusher started",
  );
  pusher.start();
  trim = startIdleHeapTrim(logger, { holdAfterWorkMs: TRIM_HOLD_AFTER_WORK_MS });
  // Type=notify units (deploy/edge-pusher.service): ready once /livez answers; WatchdogSec
  // restarts a pusher whose event loop stops.
  const notifier = serviceNotifier(env, { pid: process.pid });
  notifier.ready(`listening on ${config.listen.host}:${server.port}`);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    probing.abort();
    logger.info({ signal }, "shutting down");
    notifier.stopping();
    const hardStop = setTimeout(() => {
      logger.error("shutdown took too long; exiting");
      process.exit(1);
    }, FLUSH_TIMEOUT_MS + 10_000);
    hardStop.unref();
    trim?.stop();
    try {
      await pusher.stop({ flushTimeoutMs: FLUSH_TIMEOUT_MS });
      await server.close();
      await kv.close();
      etcd.close();
    } catch (e) {
      logger.error({ err: e }, "error during shutdown");
    }
    logger.info("stopped");
    process.exit(0);
  };
  onStop = (signal) => void shutdown(signal);
  if (stopRequested) onStop(stopRequested);
}

await main();
