import { type EnvVarDoc, PUSHER_ENV } from "./config.js";

/** The markers around the generated variable table in docs/reference.md §5. */
export const ENV_TABLE_MARKERS = {
  begin:
    "<!-- pusher-env:begin (npm run docs:pusher-env writes this table from pusher/config.ts) -->",
  end: "<!-- pusher-env:end -->",
} as const;

const LITERAL = /^[\w./:<>{}@-]+$/;

function cell(text: string): string {
  return text.replaceAll("|", "\\|");
}

function defaultCell(value: string): string {
  return value !== "unset" && LITERAL.test(value) ? `\`${value}\`` : value;
}

/** The Markdown table of `vars`: one row a variable, names and literal defaults in code spans. */
export function renderEnvTable(vars: readonly EnvVarDoc[]): string {
  const rows = vars.map((v) => {
    const names = v.name
      .split(", ")
      .map((n) => `\`${n}\``)
      .join(", ");
    const meaning = v.details ? `${v.meaning}; ${v.details}` : v.meaning;
    return `| ${names} | ${cell(defaultCell(v.default))} | ${cell(meaning)} |`;
  });
  return ["| variable | default | meaning |", "|---|---|---|", ...rows].join("\n");
}

/** `markdown` with the text between the markers replaced by the table of `PUSHER_ENV`. */
export function replaceEnvTableSection(markdown: string): string {
  const start = markdown.indexOf(ENV_TABLE_MARKERS.begin);
  const end = markdown.indexOf(ENV_TABLE_MARKERS.end);
  if (start < 0 || end < start) throw new Error("docs/reference.md lacks the pusher-env markers");
  return `${markdown.slice(0, start + ENV_TABLE_MARKERS.begin.length)}\n\n${renderEnvTable(PUSHER_ENV)}\n\n${markdown.slice(end)}`;
}
