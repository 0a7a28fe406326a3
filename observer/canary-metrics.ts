import { Gauge, type Registry } from "prom-client";
import type { CanarySideFigures } from "../core/index.js";
import type { CanaryJudgeView } from "./canary-judge.js";

const ROLES = ["none", "judge", "standby"] as const;
const VERDICTS = ["waiting", "passing", "failing"] as const;

/**
 * The judge's view of the running canary on the observer's `/metrics` (docs/reference.md §13):
 * its role, the canary's share and `--for`, the verdict, how long the gates have held, and each
 * side's figures as judged (samples, error ratio, p90). Read at scrape time from `view`.
 */
export function registerCanaryGauges(registry: Registry, view: () => CanaryJudgeView): void {
  const registers = [registry];
  new Gauge({
    name: "edge_observer_canary_role",
    help: "1 for this observer's part in the running canary: judge (it judges and ends it), standby (another observer judges) or none (no canary)",
    labelNames: ["role"],
    registers,
    collect() {
      const { role } = view();
      for (const r of ROLES) this.set({ role: r }, r === role ? 1 : 0);
    },
  });
  new Gauge({
    name: "edge_observer_canary_share_percent",
    help: "percent of each changed route's viewers on the running canary; 0 without one",
    registers,
    collect() {
      this.set(view().share ?? 0);
    },
  });
  new Gauge({
    name: "edge_observer_canary_for_seconds",
    help: "how long the running canary's gates must hold before this judge promotes it; 0 without one",
    registers,
    collect() {
      this.set(view().for_s ?? 0);
    },
  });
  new Gauge({
    name: "edge_observer_canary_verdict",
    help: "1 for this judge's last verdict on the running canary (waiting, passing, failing); all 0 when it does not judge one",
    labelNames: ["verdict"],
    registers,
    collect() {
      const verdict = view().judgement?.verdict ?? null;
      for (const v of VERDICTS) this.set({ verdict: v }, v === verdict ? 1 : 0);
    },
  });
  new Gauge({
    name: "edge_observer_canary_passing_seconds",
    help: "seconds the running canary's gates have held in a row at this judge's last judgement; 0 unless passing",
    registers,
    collect() {
      const j = view().judgement;
      const held = j?.passing_since ? Date.parse(j.judged_at) - Date.parse(j.passing_since) : 0;
      this.set(Math.max(0, Math.round(held / 1000)));
    },
  });
  sideGauge(registers, view, "samples", "requests", (s) => s.samples);
  sideGauge(registers, view, "error_ratio", "error ratio (0–1)", (s) => s.error_ratio);
  sideGauge(registers, view, "p90_ms", "p90 time to first byte (ms)", (s) => s.p90_ms);
}

/** One figure of both sides of the judged canary, labelled `side` (canary, stable). */
function sideGauge(
  registers: Registry[],
  view: () => CanaryJudgeView,
  name: string,
  what: string,
  figure: (s: CanarySideFigures) => number | null,
): void {
  new Gauge({
    name: `edge_observer_canary_${name}`,
    help: `each side's ${what} in the compared countries and minutes, as this judge last judged the running canary; absent when it judges none`,
    labelNames: ["side"],
    registers,
    collect() {
      this.reset();
      const j = view().judgement;
      if (!j) return;
      for (const side of ["canary", "stable"] as const) {
        const v = figure(j[side]);
        if (v !== null) this.set({ side }, v);
      }
    },
  });
}
