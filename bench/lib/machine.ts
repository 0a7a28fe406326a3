import { cpus, loadavg, totalmem } from "node:os";

/** What the figures were measured on: shared machines are noisy, so it goes into results. */
export interface MachineInfo {
  readonly cpu: string;
  readonly cores: number;
  readonly node: string;
  readonly platform: string;
  readonly mem_gb: number;
  /** 1-minute load average when the run started and ended. */
  readonly loadavg_start: number;
  loadavg_end?: number;
}

/** Describes this machine now. */
export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    cpu: list[0]?.model.trim() ?? "unknown",
    cores: list.length,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    mem_gb: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    loadavg_start: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}
