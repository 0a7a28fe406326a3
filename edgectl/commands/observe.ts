import { Command } from "commander";
import type { MetricsListener } from "../../heartbeat/metrics-listener.js";
import { CliError } from "../cli/cli-error.js";
import { type CommandContext, withCommonOptions } from "../cli/command-context.js";
import { parseEdgeUrl } from "../cli/edge-url.js";
import { ExitCode } from "../cli/exit-codes.js";
import { terminalJsonText } from "../output/terminal-text.js";

interface ObserveOptions {
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

/**
 * `edgectl observe --edge URL [--interval 10] [--min-samples 50] [--ttl 15] [--token-file FILE]
 * [--state FILE] [--listen HOST:PORT] [--allowed-hosts NAMES]`: long-running; logs JSON lines
 * (the shared schema) to stdout. The token comes from `--token-file` or `OBSERVE_TOKEN`. It also
 * judges the running canary and ends it through the apply commit (docs/reference.md §13).
 */
export function observeCommand(ctx: CommandContext): Command {
  return withCommonOptions(new Command("observe"))
    .description(
      "poll the edge's /__edge/observations, serve what viewers get on /metrics, write observed/CC/POOL under a lease and judge the running canary until SIGTERM",
    )
    .option("--edge <url>", "the edge's URL (default: EDGE_URL)")
    .option("--interval <seconds>", "poll interval", "10")
    .option(
      "--min-samples <n>",
      "requests a (country, pool) needs in the window before observed/CC/POOL is written",
      "50",
    )
    .option("--ttl <seconds>", "lease TTL of the observed/ keys", "15")
    .option(
      "--stale-after <seconds>",
      "how long observed/ outlives a failing edge before its lease is let go (default: 60, or 3 intervals when longer)",
    )
    .option("--token-file <path>", "read the edge's OBSERVE_TOKEN from this file")
    .option(
      "--state <file>",
      "keep the counters and what was counted of each minute here, so a restart neither resets nor double-counts them",
    )
    .option("--listen <host:port>", "serve /metrics and the observer's /status")
    .option(
      "--allowed-hosts <names>",
      "comma-separated host names --listen also answers to; other Host headers get 421",
    )
    .action(async (opts: ObserveOptions, cmd: Command) => {
      const { routingKeys } = await import("../../core/index.js");
      const { EtcdMembers } = await import("../etcd/etcd-members.js");
      const { createLogger } = await import("../../adapters/logger.js");
      const { parseListenAddress } = await import("../../heartbeat/listen-address.js");
      const { parseAllowedHosts } = await import("../../adapters/host-allow-list.js");
      const { edgeReader } = await import("../../observer/edge-reader.js");
      const { runObserver } = await import("../../observer/observer-loop.js");
      const { observerLog } = await import("../../observer/observer-log.js");
      const { ObservedKeys } = await import("../../observer/observed-keys.js");
      const { ObserverStatus } = await import("../../observer/observer-status.js");
      const { ObserverMetrics } = await import("../../observer/observer-metrics.js");
      const { ObserverStateFile } = await import("../../observer/observer-state-file.js");
      const { ObserveEventShape } = await import("../output/shapes/observe-shape.js");
      const { CanaryJudge, judgeName, NO_CANARY } = await import("../../observer/canary-judge.js");
      const { registerCanaryGauges } = await import("../../observer/canary-metrics.js");
      const { endCanary } = await import("../apply/canary-end.js");
      const { hostname } = await import("node:os");

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
      const { readCredential } = await import("../../adapters/credential.js");
      let token = readCredential(ctx.io.env, "OBSERVE_TOKEN") ?? "";
      if (opts.tokenFile !== undefined) {
        const { readFile } = await import("node:fs/promises");
        try {
          token = (await readFile(opts.tokenFile, "utf8")).trim();
        } catch (e) {
          throw new CliError(
            "invalid-input",
            `--token-file: cannot read ${opts.tokenFile} (${(e as NodeJS.ErrnoException).code ?? "error"})`,
          );
        }
      }
      if (!token)
        throw new CliError(
          "usage",
          "the edge's token is required: OBSERVE_TOKEN, or --token-file (an empty file is no token)",
        );

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
      if (listen) {
        const { startMetricsListener } = await import("../../heartbeat/metrics-listener.js");
        try {
          listener = await startMetricsListener({
            ...listen,
            registry: metrics.registry,
            allowedHosts,
            documents: {
              "/status": () => ({ ...status.document(), canary: judge?.status ?? null }),
            },
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
      const { serviceNotifier } = await import("../../adapters/systemd-notify.js");
      const notifier = serviceNotifier(ctx.io.env, { pid: process.pid });
      signal.addEventListener("abort", () => notifier.stopping(), { once: true });
      notifier.ready(`observing ${origin}`);
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
        });
      } finally {
        members.close();
        await listener?.close();
      }
      ctx.exit(ExitCode.ok);
    });
}
