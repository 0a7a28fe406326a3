import type { z } from "zod";
import type { CliIo } from "../cli/cli-io.js";
import type { Failure } from "../cli/failure.js";
import { colourEnabled, type Paint, painter } from "./colour.js";
import type { OutputMode } from "./output-mode.js";
import { terminalJson, terminalText } from "./terminal-text.js";

/** How one result is rendered: its documented JSON shape, and its text for people. */
export interface EmitOptions<T> {
  /**
   * The result's JSON shape (`edgectl/output/shapes/`). In JSON mode the result is parsed with
   * it and what the parse returns is written, so the output never carries more than the
   * documented shape (`npm run docs:cli-json` writes docs/reference.md from the same schemas).
   */
  readonly schema: z.ZodType<T>;
  /** The text-mode lines; `paint` colours them only on a terminal. */
  readonly text: (result: T, paint: Paint) => readonly string[];
}

/**
 * Where every command's output goes. The contract (docs/reference.md §6, "Output"):
 *
 * - text mode: results as lines on stdout; warnings and errors on stderr (`edgectl: …`).
 * - JSON mode (`-o json`): stdout holds exactly one JSON document per run, either the command's
 *   result ({@link CliOutput.emit}) or `{"error":{"code","message","details"}}`
 *   ({@link CliOutput.fail}); `heartbeat` writes JSON lines instead ({@link CliOutput.emitLine}),
 *   a failure being its last line. Text a command prints for people ({@link CliOutput.print},
 *   e.g. `apply`'s plan before it asks) goes to stderr, as do warnings, so a person at a
 *   terminal still reads them and a script reads stdout alone.
 * - the exit code is the same in both modes.
 * - nothing written can drive a terminal: text is escaped by `terminalText` (only edgectl's own
 *   colours pass), and JSON by `terminalJson`, whatever etcd, KV or a file put in it.
 */
export interface CliOutput {
  /** The mode in force: `-o` as commander parsed it (set before an action runs). */
  readonly mode: OutputMode;
  /** Whether a result was emitted (a JSON-mode run emits exactly one). */
  readonly emitted: boolean;
  /** Emits the command's one result: JSON on stdout, or its text lines. */
  emit<T>(result: T, opts: EmitOptions<T>): void;
  /** Emits one event of a long-running command: a JSON line on stdout, or its text lines. */
  emitLine<T>(event: T, opts: EmitOptions<T>): void;
  /** Lines for people: stdout in text mode, stderr in JSON mode. */
  print(...lines: string[]): void;
  /** Warnings: always stderr. */
  warn(...lines: string[]): void;
  /** Colours text bound for stdout (identity off a terminal, with NO_COLOR, in JSON mode). */
  readonly paint: Paint;
  /** Reports a failure: the JSON error document on stdout, or `edgectl: …` lines on stderr. */
  fail(failure: Failure, debug: boolean): void;
}

/** A {@link CliOutput} whose mode is fixed when a command's action begins. */
export interface SettableOutput extends CliOutput {
  /** A command's action begins, with `-o` as commander parsed it. */
  begin(mode: OutputMode): void;
  /** Whether an action began (false after a usage error, `--help` or `--version`). */
  readonly began: boolean;
}

/**
 * True when a command's action ran in JSON mode and finished without a result: a bug, which
 * `run()` reports as the `unexpected` error document rather than an empty stdout.
 */
export function lacksJsonResult(output: SettableOutput): boolean {
  return output.began && output.mode === "json" && !output.emitted;
}

/** Builds the output of one `run()`, starting in `mode` (the argv pre-scan). */
export function createCliOutput(io: CliIo, mode: OutputMode): SettableOutput {
  let current = mode;
  let emitted = false;
  let began = false;
  let paintOut = painter(colourEnabled(io.stdout, io.env, current));
  const paintErr = () => painter(colourEnabled(io.stderr, io.env, current));
  const line = (value: unknown) => io.stdout.write(`${terminalJson(value)}\n`);
  const write = (sink: CliIo["stdout"], text: string) => sink.write(`${terminalText(text)}\n`);
  const out: SettableOutput = {
    get mode() {
      return current;
    },
    get emitted() {
      return emitted;
    },
    get began() {
      return began;
    },
    begin(m) {
      began = true;
      current = m;
      paintOut = painter(colourEnabled(io.stdout, io.env, current));
    },
    emit(result, opts) {
      if (current === "json") {
        if (emitted) throw new Error("internal: a second result in JSON mode");
        line(opts.schema.parse(result));
      } else for (const l of opts.text(result, paintOut)) write(io.stdout, l);
      emitted = true;
    },
    emitLine(event, opts) {
      if (current === "json") line(opts.schema.parse(event));
      else for (const l of opts.text(event, paintOut)) write(io.stdout, l);
      emitted = true;
    },
    print(...lines) {
      const sink = current === "json" ? io.stderr : io.stdout;
      for (const l of lines) write(sink, l);
    },
    warn(...lines) {
      for (const l of lines) write(io.stderr, l);
    },
    paint: (c, t) => paintOut(c, t),
    fail(f, debug) {
      if (current === "json") {
        line({ error: { code: f.code, message: f.message, details: [...f.details] } });
      } else {
        const p = paintErr();
        write(io.stderr, `${p("red", "edgectl:")} ${f.message}`);
        for (const d of f.details) write(io.stderr, `  ${d}`);
      }
      if (debug && f.stack) write(io.stderr, f.stack);
      else if (f.hint && current === "text") write(io.stderr, f.hint);
    },
  };
  return out;
}
