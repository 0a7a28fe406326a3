/** The signals a long-running process stops on. */
export type StopSignal = "SIGINT" | "SIGTERM" | "SIGHUP";

/**
 * Answers each of `signals` with `onSignal` alone: a listener for one of them that any module
 * adds later is removed as soon as it is added. Miniflare (the local KV sink, workerd in tests
 * and harnesses) registers an exit hook that answers SIGINT, SIGTERM and SIGHUP with
 * `process.exit` at once, before an asynchronous shutdown could flush, release a lease or stop
 * the processes it started; its `exit` hook, which stops workerd, stays. Returns a function that
 * removes `onSignal` and stops guarding.
 */
export function ownSignals(
  signals: readonly StopSignal[],
  onSignal: (signal: StopSignal) => void,
): () => void {
  const listeners = new Map(signals.map((s) => [s, () => onSignal(s)] as const));
  const guard = (event: string | symbol, listener: unknown) => {
    const mine = listeners.get(event as StopSignal);
    if (mine === undefined || listener === mine) return;
    // `newListener` runs before the listener is added: remove it once it is.
    queueMicrotask(() => process.removeListener(event, listener as () => void));
  };
  process.on("newListener", guard);
  for (const [s, l] of listeners) process.on(s, l);
  return () => {
    process.removeListener("newListener", guard);
    for (const [s, l] of listeners) process.removeListener(s, l);
  };
}
