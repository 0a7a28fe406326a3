/**
 * Where `paint` asks for a colour, as text no other source can write: a private-use character,
 * a random number drawn once per process and never printed, and the SGR parameter.
 * `terminalText` turns exactly these marks into `ESC [ n m` and escapes every other escape
 * sequence, so a colour in etcd's text (or a file's, or KV's) stays visible text.
 */
const NONCE = Array.from(crypto.getRandomValues(new Uint32Array(4)), (n) => n.toString(36)).join(
  "",
);

const OPEN = "\ue000";

/** The mark of SGR parameter `sgr` (an integer 0–99). */
export function colourMark(sgr: number): string {
  return `${OPEN}${NONCE}:${sgr}${OPEN}`;
}

/** Every colour mark in a text; the SGR parameter is group 1. */
export function colourMarks(): RegExp {
  return new RegExp(`${OPEN}${NONCE}:(\\d{1,2})${OPEN}`, "g");
}

/** True when `text` may hold a colour mark (a quick test before the search). */
export function mayHoldColourMark(text: string): boolean {
  return text.includes(OPEN);
}
