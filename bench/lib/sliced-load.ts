import { setTimeout as sleep } from "node:timers/promises";
import autocannon from "autocannon";
import { medianWithCi } from "./stats.js";

/** One side of a comparison: a name and the headers its requests carry (Host picks the Worker). */
export interface LoadSide {
  readonly name: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Path and query of this side's requests; absent: the load's `url`'s. */
  readonly path?: string;
}

/** How `slicedLoad` divides one run of load between the sides. */
export interface SlicedLoadOptions {
  readonly url: string;
  readonly connections: number;
  readonly sides: readonly LoadSide[];
  /** Each cycle gives every side one slice; every other cycle runs the sides in reverse order. */
  readonly cycles: number;
  readonly sliceMs: number;
  /**
   * The start of each slice that is not counted: the previous side's requests still in flight
   * finish in it, so a side's window holds only its own requests.
   */
  readonly guardMs: number;
  /** One unmeasured slice of this length per side before the first cycle. */
  readonly warmupMs: number;
  /** CPU seconds the server processes have used so far, read at each window's two ends. */
  readonly cpuSeconds: () => number;
}

/** What one side did inside its counted windows. */
export interface SideTally {
  /** Responses to this side's requests that completed inside its windows. */
  requests: number;
  non2xx: number;
  windowMs: number;
  cpuSeconds: number;
  /** req/s of each of its windows, in cycle order. */
  readonly windowRates: number[];
  /** Server CPU µs per request of each of its windows, in cycle order (NaN: no request). */
  readonly windowCpuUs: number[];
  /** Latency of every counted response, ms. */
  readonly latenciesMs: number[];
}

/** The tallies by side name, plus autocannon's connection errors and timeouts (all sides). */
export interface SlicedLoadResult {
  readonly sides: ReadonlyMap<string, SideTally>;
  readonly errors: number;
  readonly timeouts: number;
}

interface Sent extends Record<string, unknown> {
  side?: number;
  sentAt?: number;
}

/**
 * The slices both Worker sections use: 100 ms, the first 25 ms of each uncounted (a latency p99
 * under this load is well inside it), a 1.5 s warm-up per side.
 */
export const SLICE = { sliceMs: 100, guardMs: 25, warmupMs: 1500 } as const;

/** Cycles for a section's `rounds × seconds` (quick 3 × 4 s: 120 cycles, 36 s with 3 sides). */
export function sliceCycles(o: { readonly rounds: number; readonly seconds: number }): number {
  return o.rounds * o.seconds * 10;
}

/** Side indices in slice order: cycles alternate forward and mirrored (A·B·C, C·B·A, …). */
function sliceOrder(sides: number, cycles: number): number[] {
  const forward = Array.from({ length: sides }, (_, i) => i);
  const out: number[] = [];
  for (let c = 0; c < cycles; c++) out.push(...(c % 2 === 0 ? forward : [...forward].reverse()));
  return out;
}

/**
 * One autocannon run whose kept-alive connections all serve one side at a time, switching every
 * `sliceMs` (no reconnect, no restart: only the request's headers change). A side's throughput
 * is its completed requests over the summed length of its windows. With slices this short and
 * mirrored cycles, drift in a shared machine's load lands on every side alike. The sides never
 * run at the same moment: closed-loop connections sharing one server at once would complete
 * requests in step, whatever each request costs.
 */
export async function slicedLoad(o: SlicedLoadOptions): Promise<SlicedLoadResult> {
  const tallies: SideTally[] = o.sides.map(() => ({
    requests: 0,
    non2xx: 0,
    windowMs: 0,
    cpuSeconds: 0,
    windowRates: [],
    windowCpuUs: [],
    latenciesMs: [],
  }));
  const headersOf = o.sides.map((s) => ({ ...s.headers }));
  const pathOf = o.sides.map((s) => s.path);
  let current = 0;
  let counting = false;
  const run = autocannon({
    url: o.url,
    connections: o.connections,
    // Stopped by the schedule below; the duration only bounds a schedule that hangs.
    duration: Math.ceil(((o.sides.length * (o.cycles * o.sliceMs + o.warmupMs)) / 1000) * 2 + 30),
    requests: [
      {
        setupRequest: (req, ctx: Sent) => {
          ctx.side = current;
          ctx.sentAt = performance.now();
          const path = pathOf[current];
          return { ...req, headers: headersOf[current] ?? {}, ...(path ? { path } : {}) };
        },
        onResponse: (status, _body, ctx: Sent) => {
          if (!counting || ctx.side !== current || ctx.sentAt === undefined) return;
          const t = tallies[current];
          if (!t) return;
          t.requests += 1;
          if (status < 200 || status > 299) t.non2xx += 1;
          t.latenciesMs.push(performance.now() - ctx.sentAt);
        },
      },
    ],
  });
  try {
    for (let i = 0; i < o.sides.length; i++) {
      current = i;
      await sleep(o.warmupMs);
    }
    for (const side of sliceOrder(o.sides.length, o.cycles)) {
      const t = tallies[side];
      if (!t) continue;
      counting = false;
      current = side;
      await sleep(o.guardMs);
      const before = t.requests;
      const cpu0 = o.cpuSeconds();
      const t0 = performance.now();
      counting = true;
      await sleep(o.sliceMs - o.guardMs);
      counting = false;
      const ms = performance.now() - t0;
      const cpu = o.cpuSeconds() - cpu0;
      const done = t.requests - before;
      t.cpuSeconds += cpu;
      t.windowMs += ms;
      t.windowRates.push((done * 1000) / ms);
      t.windowCpuUs.push(done > 0 ? (cpu * 1e6) / done : Number.NaN);
    }
  } finally {
    run.stop();
  }
  const result = await run;
  return {
    sides: new Map(o.sides.map((s, i) => [s.name, tallies[i] as SideTally])),
    errors: result.errors,
    timeouts: result.timeouts,
  };
}

/** How one side's windows compare with another's, cycle by cycle. */
export interface PairedRatio {
  /** Median over cycles of (this side's window req/s ÷ the other side's in the same cycle). */
  readonly p50: number;
  readonly min: number;
  readonly max: number;
  /** Order-statistic 95 % confidence interval of that median. */
  readonly ci95: readonly [number, number];
  /** Total over total (both sides' requests over their window time), for comparison. */
  readonly total: number;
  readonly cycles: number;
}

/**
 * `a` against `b`, one ratio per cycle (their windows there are next to each other), and the
 * median of those. A stall (a neighbour's burst, a GC pause, anywhere in the system) empties a
 * window now and then: in a total it weighs on whichever side it hit, the median shrugs it off.
 */
export function pairedRatio(a: SideTally, b: SideTally): PairedRatio {
  const ratios: number[] = [];
  a.windowRates.forEach((x, i) => {
    const y = b.windowRates[i];
    if (y !== undefined && (x > 0 || y > 0)) ratios.push(x / y);
  });
  return { ...medianWithCi(ratios), total: sideRate(a) / sideRate(b), cycles: ratios.length };
}

/** How much more server CPU per request one side costs than another, cycle by cycle. */
export interface PairedDifference {
  /** Median over cycles of (this side's window CPU µs per request − the other side's). */
  readonly p50: number;
  /** Order-statistic 95 % confidence interval of that median. */
  readonly ci95: readonly [number, number];
  /** Total over total (each side's CPU over its requests), for comparison. */
  readonly total: number;
  readonly cycles: number;
}

/**
 * `a`'s CPU per request minus `b`'s, one difference per cycle (adjacent windows), and the
 * median of those: as {@link pairedRatio}, a window that a neighbour's burst or a GC hit weighs
 * on one cycle only, not on a side's total.
 */
export function pairedDifference(a: SideTally, b: SideTally): PairedDifference {
  const diffs: number[] = [];
  a.windowCpuUs.forEach((x, i) => {
    const y = b.windowCpuUs[i];
    if (y !== undefined && Number.isFinite(x) && Number.isFinite(y)) diffs.push(x - y);
  });
  const m = medianWithCi(diffs);
  return { p50: m.p50, ci95: m.ci95, total: sideCpuUs(a) - sideCpuUs(b), cycles: diffs.length };
}

/** The nearest-rank p99 of a side's latencies, ms. */
export function sideP99(t: SideTally): number {
  const sorted = [...t.latenciesMs].sort((x, y) => x - y);
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)] ?? Number.NaN;
}

/** A side's CPU per request of the server processes, µs. */
export function sideCpuUs(t: SideTally): number {
  return (t.cpuSeconds * 1e6) / t.requests;
}

/** A side's throughput over its windows, req/s. */
export function sideRate(t: SideTally): number {
  return (t.requests * 1000) / t.windowMs;
}

/** The tally of `name`; throws when the run had no such side. */
export function tallyOf(r: SlicedLoadResult, name: string): SideTally {
  const t = r.sides.get(name);
  if (!t) throw new Error(`the sliced load had no side ${name}`);
  return t;
}
