import { type Command, Option } from "commander";
import type { CliIo } from "./cli-io.js";
import type { CliSettings, cliSettingsFromEnv } from "./cli-settings.js";

/** What every command's action gets: the I/O, its settings, and where to record its exit code. */
export interface CommandContext {
  readonly io: CliIo;
  /** Settings from the environment and the command's (and program's) `--prefix`/`--endpoints`. */
  settings(cmd: Command): CliSettings;
  /** Records the exit code of the command that ran. */
  exit(code: number): void;
  /** Writes lines to stdout. */
  print(...lines: string[]): void;
  /** Writes lines to stderr. */
  warn(...lines: string[]): void;
}

/** A context whose settings are loaded by {@link PreparedContext.prepare} before an action runs. */
export interface PreparedContext extends CommandContext {
  /**
   * Loads the settings reader (it pulls in the core's schemas, so `--help` does not load it);
   * the program calls this in its `preAction` hook.
   */
  prepare(): Promise<void>;
}

/** Builds the context for one `run()`. */
export function createCommandContext(io: CliIo, exit: (code: number) => void): PreparedContext {
  let fromEnv: typeof cliSettingsFromEnv | null = null;
  return {
    io,
    async prepare() {
      fromEnv ??= (await import("./cli-settings.js")).cliSettingsFromEnv;
    },
    settings(cmd) {
      if (fromEnv === null) throw new Error("command context used before prepare()");
      const flags = cmd.optsWithGlobals<{ prefix?: string; endpoints?: string }>();
      return fromEnv(io.env, { prefix: flags.prefix, endpoints: flags.endpoints });
    },
    exit,
    print: (...lines) => {
      for (const l of lines) io.stdout.write(`${l}\n`);
    },
    warn: (...lines) => {
      for (const l of lines) io.stderr.write(`${l}\n`);
    },
  };
}

/** Adds the options every command accepts (`--endpoints`, `--prefix`, `--debug`). */
export function withCommonOptions(cmd: Command): Command {
  return cmd
    .addOption(
      new Option(
        "--endpoints <urls>",
        "comma-separated etcd members, every one used (env ETCD_ENDPOINTS)",
      ),
    )
    .addOption(new Option("--prefix <prefix>", "etcd routing prefix (env ROUTING_PREFIX)"))
    .addOption(new Option("--debug", "print stack traces of unexpected errors"));
}
