/** Something text can be written to (process.stdout, or a buffer in tests). */
export interface TextSink {
  write(text: string): unknown;
  /** True for a terminal (process.stdout has it): only then is text output coloured. */
  readonly isTTY?: boolean;
}

/** Everything a command may touch: only `main.ts` fills it from `process`. */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly stdout: TextSink;
  readonly stderr: TextSink;
  /** Where the `apply` confirmation is read from. */
  readonly stdin?: NodeJS.ReadableStream;
  /** Whether stdin is an interactive terminal (without one, `apply` needs `--yes`). */
  readonly isTTY?: boolean;
  /** Base directory for relative paths (KV persist dir, wrangler.toml); default process.cwd(). */
  readonly cwd?: string;
  /** Aborted on SIGTERM/SIGINT: long-running commands stop cleanly. */
  readonly signal?: AbortSignal;
}
