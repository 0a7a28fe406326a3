import { hostname } from "node:os";
import type { Command } from "commander";
import { EtcdMembers } from "../../adapters/etcd-members.js";
import { parseAllowedHosts } from "../../adapters/host-allow-list.js";
import { type IdleHeapTrim, startIdleHeapTrim } from "../../adapters/idle-heap-trim.js";
import { createLogger } from "../../adapters/logger.js";
import { serviceNotifier } from "../../adapters/systemd-notify.js";
import { routingKeys } from "../../core/index.js";
import { type MetricsListener, startMetricsListener } from "../../heartbeat/metrics-listener.js";
import { CanaryJudge, judgeName, NO_CANARY } from "../../observer/canary-judge.js";
import { registerCanaryGauges } from "../../observer/canary-metrics.js";
import { edgeReader } from "../../observer/edge-reader.js";
import { ObservedKeys } from "../../observer/observed-keys.js";
import { observerLog } from "../../observer/observer-log.js";
import { runObserver } from "../../observer/observer-loop.js";
import { ObserverMetrics } from "../../observer/observer-metrics.js";
import { ObserverStateFile } from "../../observer/observer-state-file.js";
import { ObserverStatus } from "../../observer/observer-status.js";
import { endCanary } from "../apply/canary-end.js";
import { CliError } from "../cli/cli-error.js";
import { edgeToken } from "../cli/edge-token.js";
import { parseEdgeUrl } from "../cli/edge-url.js";
import { ExitCode } from "../cli/exit-codes.js";
import { parseListenAddress } from "../cli/listen-address.js";
import type { CommandContext } from "../output/command-context.js";
import { ObserveEventShape } from "../output/shapes/observe-shape.js";
import { terminalJsonText } from "../output/terminal-text.js";

/** RSS growth after which a quiet observer runs its idle heap trim again (a heartbeat's). */
const OBSERVER_TRIM_GROWTH_BYTES = 1024 * 1024;

/** `observe`'s options as commander parses them. */
export interface ObserveOptions {
  readonly edge?: string;
  readonly interval: string;
  readonly minSamples: string;
  readonly ttl: string;
  readonly staleAfter?: string;
  readonly tokenFile?: string;
  readonly state?: string;
  readonly listen?: string;
  readonly allowedHosts?: string;
}

/** Default shortest time the observations outlive a failing edge, whatever the interval. */
const MIN_STALE_MS = 60_000;

function number(flag: string, raw: string, min: number, integer = false): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < min || (integer && !Number.isInteger(n)))
    throw new CliError(
      "usage",
      `${flag}: "${raw}" must be ${integer ? "an integer" : "a number"} ≥ ${min}`,
    );
  return n;
}

/** Runs `edgectl observe` until its signal: the edge polled, observed/ written, the canary judged. */
export async function observeAction(
  ctx: CommandContext,
  opts: ObserveOptions,
  cmd: Command,
): Promise<void> {
  const edge = parseEdgeUrl(opts.edge, ctx.io.env.EDGE_URL);
  const interval = number("--interval", opts.interval, 0.05);
  const minSamples = number("--min-samples", opts.minSamples, 1, true);
  const ttl = number("--ttl", opts.ttl, 2, true);
  const staleMs =
    opts.staleAfter === undefined
      ? Math.max(MIN_STALE_MS, 3 * interval * 1000)
      : number("--stale-after", opts.staleAfter, 1) * 1000;
  const listen = opts.listen ? parseListenAddress("--listen", opts.listen) : null;
  let allowedHosts: string[];
  try {
    allowedHosts = parseAllowedHosts("--allowed-hosts", opts.allowedHosts);
  } catch (e) {
    throw new CliError("usage", e instanceof Error ? e.message : String(e));
  }
  const token = await edgeToken(ctx.io.env, "OBSERVE_TOKEN", opts.tokenFile);

  const settings = ctx.settings(cmd);
  const logger = createLogger({
    service: "edge-observer",
    level: ctx.io.env.LOG_LEVEL || "info",
    destination: { write: (line: string) => ctx.io.stdout.write(terminalJsonText(line)) },
  });
  const writeLog = observerLog(logger);
  const log = (e: Parameters<typeof writeLog>[0]) => {
    writeLog(e);
    if (ctx.mode === "json")
      ctx.emitLine(
        { time: new Date().toISOString(), ...e },
        { schema: ObserveEventShape, text: () => [] },
      );
  };
  const origin = edge.origin;
  const status = new ObserverStatus(origin);
  const metrics = new ObserverMetrics();
  let judge: InstanceType<typeof CanaryJudge> | undefined;
  registerCanaryGauges(metrics.registry, () => judge?.status ?? NO_CANARY);
  let listener: MetricsListener | undefined;
  let trim: IdleHeapTrim | null = null;
  if (listen) {
    try {
      listener = await startMetricsListener({
        ...listen,
        registry: metrics.registry,
        allowedHosts,
        documents: {
          "/status": () => ({ ...status.document(), canary: judge?.status ?? null }),
        },
        // a scrape renders every pair's series (~3 KiB a pair): its garbage left V8 ~1.5 MiB of
        // pooled pages a scrape, 75 MiB after 50 scrapes of 400 pairs, until a trim
        scraped: () => trim?.workDone(),
      });
    } catch (e) {
      throw new CliError(
        "usage",
        `--listen: cannot listen on ${opts.listen}: ${e instanceof Error ? e.message : String(e)}`,
      );
    }
    logger.info({ listen: `${listen.host}:${listener.port}` }, "serving /metrics and /status");
  }
  const members = EtcdMembers.open(settings);
  const keys = routingKeys(settings.prefix);
  const observed = new ObservedKeys(members, keys.observed, ttl, {
    registered: (lease) => log({ event: "registered", edge: origin, lease }),
    written: (o) => {
      metrics.wrote("put", observed.count);
      log({
        event: "observed-written",
        edge: origin,
        country: o.country,
        pool: o.pool,
        ...o.value,
      });
    },
    removed: (country, pool) => {
      metrics.wrote("delete", observed.count);
      log({ event: "observed-removed", edge: origin, country, pool });
    },
    leaseLost: () => log({ event: "lease-lost", edge: origin }),
  });
  judge = new CanaryJudge({
    members,
    canaryKey: keys.canary,
    judgementKey: keys.canaryJudgement,
    ttlSeconds: ttl,
    judge: judgeName(hostname(), process.pid, origin),
    end: (how, id, reason) =>
      endCanary(members, settings, how, reason, id, (line) => ctx.warn(line)),
    log: (e) => log({ edge: origin, ...e }),
  });
  const signal = ctx.io.signal ?? new AbortController().signal;
  // Type=notify (deploy/edge-observer.service): ready as the loop starts; WatchdogSec
  // restarts an observer whose event loop stops.
  const notifier = serviceNotifier(ctx.io.env, { pid: process.pid });
  signal.addEventListener("abort", () => notifier.stopping(), { once: true });
  notifier.ready(`observing ${origin}`);
  // Each poll's rows leave free heap pages V8 keeps pooled (resident, not in its heap figures):
  // the soak saw 45 MiB of them a few minutes after a start, with the heap itself flat. A poll
  // is a piece of work: the trim due runs after it, not only once a whole second was quiet,
  // which a slower machine's 2-second polls seldom leave.
  trim = startIdleHeapTrim(logger, { minGrowthBytes: OBSERVER_TRIM_GROWTH_BYTES });
  try {
    await runObserver({
      edge: origin,
      read: edgeReader({ edge, token, timeoutMs: Math.min(interval, 5) * 1000 }),
      keys: observed,
      minSamples,
      intervalMs: interval * 1000,
      staleMs,
      status,
      metrics,
      ...(opts.state ? { stateFile: new ObserverStateFile(opts.state) } : {}),
      canary: judge,
      log,
      signal,
      pollDone: () => trim?.workDone(),
    });
  } finally {
    trim?.stop();
    members.close();
    await listener?.close();
  }
  ctx.exit(ExitCode.ok);
}
