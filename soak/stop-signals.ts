import { ownSignals } from "../adapters/own-signals.js";

/**
 * Calls `stop` on the first SIGINT, SIGTERM or SIGHUP, and on that one only: Ctrl-C reaches the
 * whole process group (npm, this process), so the signal may come more than once. No other
 * module's listener answers them (`ownSignals`: Miniflare's would exit before `stop` is done).
 * Returns a function that lets them go.
 */
export function onStopSignal(stop: (signal: NodeJS.Signals) => void): () => void {
  let signalled = false;
  return ownSignals(["SIGINT", "SIGTERM", "SIGHUP"], (sig) => {
    if (signalled) return;
    signalled = true;
    stop(sig);
  });
}
