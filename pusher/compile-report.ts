import type { Logger } from "pino";
import { poolReportsOf } from "../core/compile/pool-report.js";
import { type CompileResult, canaryReport, viewerShedReports } from "../core/index.js";
import type { PusherMetrics } from "./metrics.js";
import type { PusherStatus } from "./status.js";
import type { RoutingView } from "./ui/routing-view.js";

/** Where a compile is reported: its metrics, the problems log, pool reports and the `/ui` view. */
export interface CompileReportDeps {
  readonly metrics: PusherMetrics;
  readonly logger: Logger;
  readonly status: PusherStatus;
  readonly routing: RoutingView;
}

/**
 * Reports each compile once it is made: what only tells about the compile, run after its write
 * has started. The problems are logged when their list changes, not on every compile.
 */
export class CompileReport {
  private lastProblems = "";

  constructor(private readonly deps: CompileReportDeps) {}

  report(result: CompileResult, compileMs: number): void {
    const { metrics, logger, status, routing } = this.deps;
    metrics.compileDuration.observe(compileMs / 1000);
    // The map's own list: already bounded (a prefix of 100,000 junk keys has as many problems).
    const problems = result.map.problems;
    const joined = problems.join("\n");
    if (joined !== this.lastProblems) {
      this.lastProblems = joined;
      if (problems.length) logger.warn({ problems, revision: result.map.rev }, "routing problems");
    }
    if (status.role === "standby") status.problems = problems;
    status.showPools(() => poolReportsOf(result));
    status.showViewerSheds(() => viewerShedReports(result.state, result.map));
    status.showCanary((nowMs) =>
      canaryReport(result.state.canary, result.state.canaryJudgement, nowMs),
    );
    routing.update(result);
    metrics.compiled(result);
  }
}
