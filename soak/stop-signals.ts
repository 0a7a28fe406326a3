/**
 * Calls `stop` on the first SIGINT or SIGTERM, and on that one only: Ctrl-C reaches the whole
 * process group (npm, tsx, this process), so the signal may come more than once.
 */
export function onStopSignal(stop: (signal: NodeJS.Signals) => void): void {
  let signalled = false;
  for (const sig of ["SIGINT", "SIGTERM"] as const)
    process.on(sig, () => {
      if (signalled) return;
      signalled = true;
      stop(sig);
    });
}
