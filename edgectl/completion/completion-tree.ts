import type { Command } from "commander";

/** The shells `edgectl completion` writes a script for. */
export const COMPLETION_SHELLS = ["bash", "zsh", "fish"] as const;

/** One option as completion sees it. */
export interface CompletionOption {
  /** `-o`, when it has one. */
  readonly short?: string;
  /** `--output`. */
  readonly long: string;
  readonly description: string;
  /** Whether a value follows (`--ttl <duration>`). */
  readonly takesValue: boolean;
  /** The values commander accepts, when it restricts them. */
  readonly choices?: readonly string[];
}

/** One command: its options and what its arguments are. */
export interface CompletionCommand {
  readonly name: string;
  readonly description: string;
  readonly options: readonly CompletionOption[];
  /** The choices of its first argument, when commander restricts them. */
  readonly argChoices?: readonly string[];
  /** Whether its first argument is a file (named `file`). */
  readonly fileArgument: boolean;
}

/** What the completion scripts are generated from: the program's own command tree. */
export interface CompletionTree {
  readonly program: string;
  readonly globalOptions: readonly CompletionOption[];
  readonly commands: readonly CompletionCommand[];
}

function optionsOf(cmd: Command): CompletionOption[] {
  const out: CompletionOption[] = [];
  for (const o of cmd.options) {
    if (o.hidden || !o.long) continue;
    out.push({
      ...(o.short ? { short: o.short } : {}),
      long: o.long,
      description: o.description,
      takesValue: o.required || o.optional,
      ...(o.argChoices ? { choices: [...o.argChoices] } : {}),
    });
  }
  out.push({ short: "-h", long: "--help", description: "display help", takesValue: false });
  return out;
}

/** Reads commands, options and choices from a built program (commander's public API). */
export function completionTree(program: Command): CompletionTree {
  return {
    program: program.name(),
    globalOptions: optionsOf(program),
    commands: program.commands.map((c) => {
      const first = c.registeredArguments[0];
      return {
        name: c.name(),
        description: c.description(),
        options: optionsOf(c),
        ...(first?.argChoices ? { argChoices: [...first.argChoices] } : {}),
        fileArgument: first?.name() === "file",
      };
    }),
  };
}
