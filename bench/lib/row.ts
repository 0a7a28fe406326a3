/** One line of the bench table. */
export type Row = readonly [
  figure: string,
  value: string,
  floor: string,
  ratio: string,
  goal: string,
  verdict: string,
];

/** Milliseconds with one decimal. */
export const ms = (v: number) => `${v.toFixed(1)} ms`;
/** A goal's verdict. */
export const check = (ok: boolean) => (ok ? "met" : "MISSED");
/** `floor + 3.0 ms`, `floor − 3.0 ms`: a figure against its floor. */
export const signed = (d: number, floor: string) =>
  `${floor} ${d < 0 ? "−" : "+"} ${ms(Math.abs(d))}`;

/**
 * A goal's verdict on an estimate with a 95 % interval: `met` or `MISSED` when the whole
 * interval is on one side of the goal, `undecided` when it holds the goal (more samples, or a
 * quieter host, would tell).
 */
export function checkCi(
  ci95: readonly [number, number],
  goal: number,
  side: "at most" | "at least",
): "met" | "MISSED" | "undecided" {
  const [lo, hi] = ci95;
  const within = side === "at most" ? hi <= goal : lo >= goal;
  const outside = side === "at most" ? lo > goal : hi < goal;
  return within ? "met" : outside ? "MISSED" : "undecided";
}
