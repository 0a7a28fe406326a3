import { createInterface } from "node:readline";
import type { Readable, Writable } from "node:stream";
import { stripVTControlCharacters, styleText } from "node:util";
import { compactJsonLine } from "./compact-json.js";

type Colour = Parameters<typeof styleText>[0];
const PALETTE: readonly Colour[] = ["cyan", "magenta", "yellow", "green", "blue", "red"];

/** Writes lines prefixed with a component name, coloured when the stream is a terminal. */
export class PrefixedOutput {
  private readonly colours = new Map<string, Colour>();
  private readonly width: number;

  constructor(
    private readonly out: Writable,
    private readonly colour: boolean,
    width = 18,
  ) {
    this.width = width;
  }

  private paint(colour: Colour, text: string): string {
    return this.colour ? styleText(colour, text) : text;
  }

  /** The `[name]` tag, padded so that component output lines up. */
  tag(name: string): string {
    let colour = this.colours.get(name);
    if (!colour) {
      colour = name === "stack" ? "bold" : (PALETTE[this.colours.size % PALETTE.length] ?? "cyan");
      this.colours.set(name, colour);
    }
    return this.paint(colour, `[${name}]`.padEnd(this.width));
  }

  /** Writes one line under a component's tag. */
  line(name: string, text: string): void {
    this.out.write(`${this.tag(name)} ${text}\n`);
  }

  /** A highlighted line from the stack itself. */
  notice(text: string, style: "ok" | "warn" | "error" | "plain" = "plain"): void {
    const colour: Colour =
      style === "ok" ? "green" : style === "warn" ? "yellow" : style === "error" ? "red" : "white";
    this.out.write(`${this.tag("stack")} ${style === "plain" ? text : this.paint(colour, text)}\n`);
  }

  /** Forwards a child's stream line by line under its tag. */
  pipe(name: string, stream: Readable): void {
    const rl = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
    // Strip terminal control sequences children emit (wrangler draws boxes and clears lines).
    rl.on("line", (l) => {
      const text = compactJsonLine(stripVTControlCharacters(l).trimEnd());
      if (text.length > 0) this.line(name, text);
    });
  }
}
