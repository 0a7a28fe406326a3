import type { Transcript } from "./support/transcript.js";

/** What one scenario reports: how often it attacked, its headline figure, what broke. */
export interface ScenarioResult {
  /** Iterations run (kills, cuts, requests, files…): the "runs" column. */
  readonly runs: number;
  /** The scenario's figure, one line (e.g. `20 kills, 5000 writes, converged in 0.8 s`). */
  readonly figure: string;
  /** Broken invariants, one line each; empty means the scenario passed. */
  readonly failures: readonly string[];
  /** Extra lines worth printing below the table (findings, mutant results). */
  readonly notes?: readonly string[];
}

/** Everything a scenario gets from the runner. */
export interface FaultContext {
  /** Reduced iterations for CI (`--quick` / `FAULTS_QUICK=1`). */
  readonly quick: boolean;
  /** Seed of this run's random choices (printed, so a failure can be replayed). */
  readonly seed: number;
  /** Every log line and every /status and /metrics body, for the secrets grep. */
  readonly transcript: Transcript;
  /** Registers teardown; run in reverse order after the scenario, even when it throws. */
  defer(fn: () => Promise<void> | void): void;
  /** A progress line on stderr. */
  progress(message: string): void;
}

/** One attack on the system, with the invariant it must keep. */
export interface Scenario {
  readonly id: number;
  readonly title: string;
  /** The promise this scenario checks, printed above its run. */
  readonly invariant: string;
  /** Upper bound on its wall time; the runner fails it past this. */
  readonly budgetMs: (quick: boolean) => number;
  run(ctx: FaultContext): Promise<ScenarioResult>;
}

/** Collects broken invariants with a bounded number of examples each. */
export class Invariants {
  private readonly counts = new Map<string, { n: number; examples: string[] }>();

  /** Records a violation of `name` unless `ok`. Returns `ok`. */
  check(ok: boolean, name: string, example: () => string): boolean {
    if (ok) return true;
    const c = this.counts.get(name) ?? { n: 0, examples: [] };
    c.n += 1;
    if (c.examples.length < 3) c.examples.push(example());
    this.counts.set(name, c);
    return false;
  }

  /** Number of violations of `name` so far. */
  count(name: string): number {
    return this.counts.get(name)?.n ?? 0;
  }

  /** One line per broken invariant. */
  failures(): string[] {
    return [...this.counts].map(
      ([name, c]) =>
        `${name}: ${c.n} violation${c.n === 1 ? "" : "s"} (e.g. ${c.examples.join("; ")})`,
    );
  }
}

/** Seconds with one decimal. */
export function secs(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
