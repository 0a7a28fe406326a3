import type { TextSink } from "../cli/cli-io.js";
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

/** A painter for one sink: styles when `enabled`, the identity otherwise. */
export function painter(enabled: boolean): Paint {
  if (!enabled) return (_c, t) => t;
  // Not a static import: node:util's ES module facade reads every export, TextDecoder's too,
  // which costs each edgectl start about 10 ms.
  const { styleText } = process.getBuiltinModule("node:util");
  // the decision is ours (the sink may be a buffer): styleText must not second-guess it
  return (c, t) => styleText(c, t, { validateStream: false });
}
