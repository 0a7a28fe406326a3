/** The formats `-o, --output` accepts. */
export const OUTPUT_MODES = ["text", "json"] as const;

/** `text` (for people, the default) or `json` (one JSON document on stdout, for scripts). */
export type OutputMode = (typeof OUTPUT_MODES)[number];

/**
 * The mode named on a command line, read before commander has parsed it: only for reporting a
 * usage error (unknown option, missing argument) in the format the caller asked for. Once
 * commander has parsed the line, the parsed option is what counts.
 */
export function outputModeFromArgv(argv: readonly string[]): OutputMode {
  let mode: OutputMode = "text";
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") break;
    const value =
      a === "-o" || a === "--output"
        ? argv[i + 1]
        : a?.startsWith("--output=")
          ? a.slice("--output=".length)
          : a?.startsWith("-o") && a.length > 2
            ? a.slice(2)
            : undefined;
    if (value === "json" || value === "text") mode = value;
    // `--json` is explain's old spelling of `-o json`
    else if (a === "--json") mode = "json";
  }
  return mode;
}
