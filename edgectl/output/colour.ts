import type { TextSink } from "../cli/cli-io.js";
import { colourMark } from "./colour-mark.js";
import type { OutputMode } from "./output-mode.js";

/** The styles edgectl's text output uses. */
export type Colour = "green" | "red" | "yellow" | "dim" | "bold";

/** Wraps text in a style, or returns it unchanged when colours are off. */
export type Paint = (colour: Colour, text: string) => string;

/**
 * Colours are on only for text output to a terminal, and never when `NO_COLOR` is set to a
 * non-empty value (no-color.org) or `TERM` is `dumb`: JSON output and pipes never carry escapes.
 */
export function colourEnabled(
  sink: TextSink,
  env: Readonly<Record<string, string | undefined>>,
  mode: OutputMode,
): boolean {
  if (mode !== "text" || sink.isTTY !== true) return false;
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return false;
  return env.TERM !== "dumb";
}

/** Each colour's SGR parameters: on, and the reset that ends it. */
const SGR: Record<Colour, readonly [on: number, off: number]> = {
  green: [32, 39],
  red: [31, 39],
  yellow: [33, 39],
  dim: [2, 22],
  bold: [1, 22],
};

/**
 * A painter for one sink: styles when `enabled`, the identity otherwise. A style is written as
 * colour marks (`colourMark`), which only `terminalText` turns into escape sequences: text that
 * carries escape sequences of its own, whatever it is, never passes as a colour.
 */
export function painter(enabled: boolean): Paint {
  if (!enabled) return (_c, t) => t;
  return (c, t) => `${colourMark(SGR[c][0])}${t}${colourMark(SGR[c][1])}`;
}
