import { execFile } from "node:child_process";

/** What a service tells systemd (`sd_notify(3)`); a no-op outside a `Type=notify` unit. */
export interface ServiceNotifier {
  /** The service is up: `READY=1`, then a `WATCHDOG=1` every half `WatchdogSec` while the event loop runs. */
  ready(status: string): void;
  /** The service is stopping (`STOPPING=1`); the watchdog pings stop. */
  stopping(): void;
  /** Whether systemd asked for notifications (`NOTIFY_SOCKET` is set). */
  readonly enabled: boolean;
  /** The watchdog ping interval in ms (half of `WATCHDOG_USEC`), or null without a watchdog. */
  readonly pingMs: number | null;
}

/** How one notification is sent; `systemd-notify` by default. */
export type NotifySend = (
  assignments: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
) => void;

/**
 * Sends through `systemd-notify ASSIGNMENT…`, which writes one datagram to `$NOTIFY_SOCKET` (Node
 * has no AF_UNIX datagram socket, and the npm `sd-notify` package is a native addon the bundle
 * cannot carry). The sender is this child, not the service's main process, so the unit needs
 * `NotifyAccess=all`. A failure is ignored: a lost ping is what the watchdog is for.
 */
export const systemdNotifySend: NotifySend = (assignments, env) => {
  const child = execFile("systemd-notify", [...assignments], { env, timeout: 5_000 }, () => {});
  child.unref();
};

/**
 * The notifier for a service started with `env` (only entry points pass `process.env`). The
 * watchdog's pings ride the event loop's own timers, so a loop blocked for longer than
 * `WatchdogSec` misses them and systemd restarts the service (`WATCHDOG_PID`, when set, must be
 * this process). Each ping repeats `READY=1`, so a lost first notification cannot stall the start.
 */
export function serviceNotifier(
  env: Readonly<Record<string, string | undefined>>,
  opts: { readonly pid: number; readonly send?: NotifySend } = { pid: process.pid },
): ServiceNotifier {
  const socket = env.NOTIFY_SOCKET;
  const send = opts.send ?? systemdNotifySend;
  const usec = Number(env.WATCHDOG_USEC);
  const forUs = env.WATCHDOG_PID === undefined || Number(env.WATCHDOG_PID) === opts.pid;
  const pingMs = socket && forUs && usec > 0 ? Math.max(1, Math.floor(usec / 2_000)) : null;
  // The child gets the socket and nothing else (no secret, no PATH: Node then looks in /usr/bin:/bin).
  const childEnv: Readonly<Record<string, string | undefined>> = { NOTIFY_SOCKET: socket };
  let timer: NodeJS.Timeout | undefined;
  return {
    enabled: Boolean(socket),
    pingMs,
    ready(status) {
      if (!socket) return;
      send(["READY=1", `STATUS=${status}`], childEnv);
      if (pingMs !== null && !timer) {
        timer = setInterval(() => send(["READY=1", "WATCHDOG=1"], childEnv), pingMs);
        timer.unref();
      }
    },
    stopping() {
      if (timer) clearInterval(timer);
      timer = undefined;
      if (socket) send(["STOPPING=1"], childEnv);
    },
  };
}
