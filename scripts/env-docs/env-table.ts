import type { EnvVarDoc } from "../../adapters/env-var-doc.js";
import type { WorkerVarDoc } from "../../worker/worker-vars.js";

/** The comments around one generated table in a doc. */
export interface TableMarkers {
  readonly begin: string;
  readonly end: string;
}

const LITERAL = /^[\w./:<>{}@-]+$/;

function cell(text: string): string {
  return text.replaceAll("|", "\\|");
}

function defaultCell(value: string): string {
  return value !== "unset" && LITERAL.test(value) ? `\`${value}\`` : value;
}

function codeNames(names: string): string {
  return names
    .split(", ")
    .map((n) => `\`${n}\``)
    .join(", ");
}

/** The Markdown table of `vars`: one row a variable, names and literal defaults in code spans. */
export function renderEnvTable(vars: readonly EnvVarDoc[]): string {
  const rows = vars.map((v) => {
    const meaning = v.details ? `${v.meaning}; ${v.details}` : v.meaning;
    return `| ${codeNames(v.name)} | ${cell(defaultCell(v.default))} | ${cell(meaning)} |`;
  });
  return ["| variable | default | meaning |", "|---|---|---|", ...rows].join("\n");
}

/** The Markdown table of the Worker's bindings, vars and secrets (a secret says so by its name). */
export function renderWorkerTable(vars: readonly WorkerVarDoc[]): string {
  const rows = vars.map((v) => {
    const name = v.kind === "secret" ? `\`${v.name}\` (secret)` : `\`${v.name}\``;
    return `| ${name} | ${cell(defaultCell(v.default))} | ${cell(v.meaning)} |`;
  });
  return ["| binding / var | default | meaning |", "|---|---|---|", ...rows].join("\n");
}

/** `markdown` with the text between `markers` replaced by `table`; throws when a marker is missing. */
export function replaceBetween(markdown: string, markers: TableMarkers, table: string): string {
  const start = markdown.indexOf(markers.begin);
  const end = markdown.indexOf(markers.end);
  if (start < 0 || end < start) throw new Error(`the doc lacks the markers ${markers.begin}`);
  return `${markdown.slice(0, start + markers.begin.length)}\n\n${table}\n\n${markdown.slice(end)}`;
}
