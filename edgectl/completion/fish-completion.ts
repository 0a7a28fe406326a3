import type { CompletionOption, CompletionTree } from "./completion-tree.js";

const quote = (text: string) => `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

function optionLine(program: string, condition: string, o: CompletionOption): string {
  const parts = [`complete -c ${program} -n ${quote(condition)}`];
  if (o.short) parts.push(`-s ${o.short.slice(1)}`);
  parts.push(`-l ${o.long.slice(2)}`);
  if (o.takesValue) parts.push(o.choices ? `-x -a ${quote(o.choices.join(" "))}` : "-r");
  parts.push(`-d ${quote(o.description)}`);
  return parts.join(" ");
}

/** A fish completion script (`edgectl completion fish > ~/.config/fish/completions/edgectl.fish`). */
export function fishCompletion(tree: CompletionTree): string {
  const p = tree.program;
  const lines = [
    `# ${p} completion for fish, generated from its command tree:`,
    `#   ${p} completion fish > ~/.config/fish/completions/${p}.fish`,
    `complete -c ${p} -f`,
    ...tree.globalOptions.map((o) => optionLine(p, "__fish_use_subcommand", o)),
  ];
  for (const c of tree.commands) {
    lines.push(
      `complete -c ${p} -n '__fish_use_subcommand' -a ${c.name} -d ${quote(c.description)}`,
    );
    const seen = `__fish_seen_subcommand_from ${c.name}`;
    for (const o of c.options) lines.push(optionLine(p, seen, o));
    if (c.argChoices)
      lines.push(
        `complete -c ${p} -n ${quote(`${seen}; and not __fish_seen_subcommand_from ${c.argChoices.join(" ")}`)} -a ${quote(c.argChoices.join(" "))}`,
      );
    if (c.fileArgument) lines.push(`complete -c ${p} -n ${quote(seen)} -F`);
  }
  return `${lines.join("\n")}\n`;
}
