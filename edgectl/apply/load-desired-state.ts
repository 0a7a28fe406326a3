import { readFile } from "node:fs/promises";
import { parseDocument } from "yaml";
import {
  type DesiredState,
  formatProblem,
  safeText,
  validateDesiredState,
} from "../../core/index.js";
import { CliError } from "../cli/cli-error.js";

/** Parses YAML (JSON is YAML) text; syntax errors and duplicate keys name `file:line:col`. */
export function parseDesiredText(text: string, name: string): unknown {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    const lines = doc.errors.map((e) => {
      const pos = e.linePos?.[0];
      const where = pos ? `${name}:${pos.line}:${pos.col}` : name;
      const what = e.code === "DUPLICATE_KEY" ? "duplicate key" : "syntax error";
      // The parser's message may quote the file: escaped and cut like every problem line.
      return safeText(
        `${where}: ${what}: ${e.message.split("\n")[0]?.replace(/ at line \d+, column \d+:?$/, "")}`,
      );
    });
    throw new CliError("syntax-error", `${name} is not valid YAML or JSON`, lines);
  }
  return doc.toJS({ maxAliasCount: 100 });
}

/** Validates a parsed document; every problem is printed with its key. */
export function validateDesiredDoc(doc: unknown, name: string): DesiredState {
  const result = validateDesiredState(doc);
  if (!result.ok) {
    throw new CliError(
      "invalid-input",
      `${name} is invalid (${result.problems.length} problem${result.problems.length === 1 ? "" : "s"})`,
      result.problems.map(formatProblem),
    );
  }
  return result.state;
}

/** Reads, parses and validates a desired-state file. */
export async function loadDesiredState(path: string): Promise<DesiredState> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code ?? "error";
    throw new CliError("unreadable-file", `cannot read ${path} (${code})`);
  }
  return validateDesiredDoc(parseDesiredText(text, path), path);
}
