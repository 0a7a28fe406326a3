import { readdirSync, readFileSync } from "node:fs";

/**
 * CPU seconds a process's threads have run so far, in nanoseconds' resolution: the sum of
 * `/proc/PID/task/TID/schedstat` (time on a CPU). `/proc/PID/stat` counts in 10 ms ticks, too
 * coarse for a 75 ms window; this is exact. NaN when the process is gone. Long-lived threads
 * only: a thread that exits between two reads takes its time out of the sum.
 */
export function processRunSeconds(pid: number): number {
  let ns = 0;
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // The thread exited while the directory was read.
      }
    }
  } catch {
    return Number.NaN;
  }
  return ns / 1e9;
}
