import { readFileSync } from "node:fs";

/** Resident set size of a process in MiB, from /proc (NaN when it is gone). */
export function rssMb(pid: number): number {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Direct children of a process, from /proc (workerd under the pusher's local sink). */
export function childPids(pid: number): number[] {
  try {
    const tasks = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    return tasks ? tasks.split(/\s+/).map(Number) : [];
  } catch {
    return [];
  }
}

/** The process's command name (`comm`). */
export function commName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "";
  }
}
