import type { GrowthVerdict } from "./no-growth.js";

/** What the end-of-run report prints. */
export interface ReportInput {
  /** Seconds of the judged window (the second half). */
  readonly judgedSeconds: number;
  readonly warmupSeconds: number;
  readonly growth: readonly GrowthVerdict[];
  /** Lines after the verdicts: convergence, counts, leases, where the results went. */
  readonly summary: readonly string[];
  readonly failures: readonly string[];
}

/**
 * The run's verdicts on stdout: every judged fit but the passing heartbeat fits (counted in one
 * line: there are over a hundred), the summary lines, then each failure.
 */
export function printReport(r: ReportInput, out: NodeJS.WritableStream = process.stdout): void {
  const judged = r.growth.filter((g) => g.status !== "short");
  out.write(
    `\nno growth over the second half (${r.judgedSeconds} s; warm-up ${r.warmupSeconds} s of each process left out):\n`,
  );
  for (const g of judged) {
    if (g.status === "fail" || !g.series.startsWith("heartbeat:"))
      out.write(
        `  ${g.status === "fail" ? "FAIL" : "ok  "} ${g.figure.padEnd(12)} ${g.series.padEnd(34)} ${g.detail}\n`,
      );
  }
  const heartbeats = judged.filter((g) => g.series.startsWith("heartbeat:"));
  out.write(
    `  (${heartbeats.filter((g) => g.status === "pass").length} of ${heartbeats.length} heartbeat fits pass; all in results.json)\n`,
  );
  for (const line of r.summary) out.write(`${line}\n`);
  for (const f of r.failures) out.write(`FAIL ${f}\n`);
}
