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
