import { type Command, Option } from "commander";
import type { CliIo } from "../cli/cli-io.js";
import type { CliSettings, cliSettingsFromEnv } from "../cli/cli-settings.js";
import type { CliOutput, EmitOptions, SettableOutput } from "./cli-output.js";
import type { Paint } from "./colour.js";
import { OUTPUT_MODES, type OutputMode } from "./output-mode.js";

/**
 * What every command's action gets: the I/O, its settings, its output and where to record its
 * exit code. A command reports its result with {@link CommandContext.emit} (once) and fails by
 * throwing (a `CliError` for expected failures); `run()` renders either in the chosen mode.
 *
 * @example
 * ctx.emit(
 *   { file, valid: true, pools: 3, rules: 2 },
 *   { schema: ValidateShape, text: (r) => [`${r.file} is valid`] },
 * );
 */
export interface CommandContext {
  /**
   * The I/O. In JSON mode its `stdout` is stderr: whatever a command writes there directly (the
   * `apply` prompt) reaches a person without breaking the one JSON document on stdout.
   */
  readonly io: CliIo;
  /** `text` or `json` (`-o`), as parsed for the command that runs. */
  readonly mode: OutputMode;
  /** Settings from the environment and the command's (and program's) `--prefix`/`--endpoints`. */
  settings(cmd: Command): CliSettings;
  /** Records the exit code of the command that ran. */
  exit(code: number): void;
  /** Emits the command's result: one JSON document (`-o json`) or its text lines. */
  emit<T>(result: T, opts: EmitOptions<T>): void;
  /** Emits one event of a long-running command: a JSON line (`-o json`) or its text lines. */
  emitLine<T>(event: T, opts: EmitOptions<T>): void;
  /** Writes lines for people: stdout in text mode, stderr in JSON mode (stdout stays JSON). */
  print(...lines: string[]): void;
  /** Writes lines to stderr. */
  warn(...lines: string[]): void;
  /** Colours text bound for stdout; the identity off a terminal, with NO_COLOR or in JSON mode. */
  readonly paint: Paint;
}

/** A context whose settings are loaded by {@link PreparedContext.prepare} before an action runs. */
export interface PreparedContext extends CommandContext {
  /**
   * Loads the settings reader (it pulls in the core's schemas, so `--help` does not load it) and
   * fixes the output mode from the parsed `-o`; the program calls this in its `preAction` hook.
   */
  prepare(actionCommand: Command): Promise<void>;
  /** The output, for `run()` to report failures in the same mode. */
  readonly output: CliOutput;
}

/** Builds the context for one `run()`. */
export function createCommandContext(
  io: CliIo,
  output: SettableOutput,
  exit: (code: number) => void,
): PreparedContext {
  let fromEnv: typeof cliSettingsFromEnv | null = null;
  // Made on first use: a spread reads io's getters, and main.ts's stdin opens the descriptor.
  let jsonIo: CliIo | null = null;
  return {
    get io() {
      if (output.mode !== "json") return io;
      jsonIo ??= { ...io, stdout: io.stderr };
      return jsonIo;
    },
    output,
    get mode() {
      return output.mode;
    },
    async prepare(actionCommand) {
      const { output: mode, json } = actionCommand.optsWithGlobals<{
        output?: OutputMode;
        json?: boolean;
      }>();
      output.begin(json ? "json" : (mode ?? "text"));
      // Lazy: the core's schemas static here made `edgectl --help` 119 ms, not 51 (min of 10).
      fromEnv ??= (await import("../cli/cli-settings.js")).cliSettingsFromEnv;
    },
    settings(cmd) {
      if (fromEnv === null) throw new Error("command context used before prepare()");
      const flags = cmd.optsWithGlobals<{ prefix?: string; endpoints?: string }>();
      return fromEnv(io.env, { prefix: flags.prefix, endpoints: flags.endpoints });
    },
    exit,
    emit: (result, opts) => output.emit(result, opts),
    emitLine: (event, opts) => output.emitLine(event, opts),
    print: (...lines) => output.print(...lines),
    warn: (...lines) => output.warn(...lines),
    paint: (c, t) => output.paint(c, t),
  };
}

/**
 * Adds the options every command accepts (`-o/--output`, `--endpoints`, `--prefix`, `--debug`).
 * `-o` has no default here: the program's and the command's would shadow each other.
 */
export function withCommonOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        "-o, --output <format>",
        "output format (json: one JSON document on stdout)",
      ).choices(OUTPUT_MODES),
    )
    .addOption(
      new Option(
        "--endpoints <urls>",
        "comma-separated etcd members, every one used (env ETCD_ENDPOINTS)",
      ),
    )
    .addOption(new Option("--prefix <prefix>", "etcd routing prefix (env ROUTING_PREFIX)"))
    .addOption(new Option("--debug", "print stack traces of unexpected errors"));
}
