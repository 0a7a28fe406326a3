import type { CompletionOption, CompletionTree } from "./completion-tree.js";

/** Text safe inside a single-quoted zsh `_arguments` spec. */
const spec = (text: string) => text.replace(/'/g, "'\\''").replace(/\[/g, "(").replace(/\]/g, ")");

function optionSpec(o: CompletionOption): string {
  const value = o.takesValue
    ? `:${o.long.slice(2)}:${o.choices ? `(${o.choices.join(" ")})` : " "}`
    : "";
  const body = `[${spec(o.description)}]${value}`;
  return o.short ? `'(${o.short} ${o.long})'{${o.short},${o.long}}'${body}'` : `'${o.long}${body}'`;
}

/** A zsh completion script (`#compdef`; save it as `_edgectl` on $fpath, or source it). */
export function zshCompletion(tree: CompletionTree): string {
  const fn = `_${tree.program.replace(/[^A-Za-z0-9_]/g, "_")}`;
  const cases = tree.commands.map((c) => {
    const first = c.argChoices
      ? ` '1:${c.name === "completion" ? "shell" : "value"}:(${c.argChoices.join(" ")})'`
      : c.fileArgument
        ? " '1:file:_files'"
        : "";
    return `    ${c.name})\n      _arguments -s ${c.options.map(optionSpec).join(" ")}${first} ;;`;
  });
  return `#compdef ${tree.program}
# ${tree.program} completion for zsh, generated from its command tree:
#   ${tree.program} completion zsh > "\${fpath[1]}/_${tree.program}"   (or: source <(${tree.program} completion zsh))
${fn}() {
  local -a commands
  commands=(
${tree.commands.map((c) => `    '${c.name}:${spec(c.description)}'`).join("\n")}
  )
  local curcontext="$curcontext" state line
  _arguments -C ${tree.globalOptions.map(optionSpec).join(" ")} '1: :->command' '*:: :->args'
  case $state in
    command) _describe -t commands '${tree.program} command' commands ;;
    args)
      case $line[1] in
${cases.join("\n")}
      esac ;;
  esac
}
if [[ "\${funcstack[1]}" == "${fn}" ]]; then ${fn} "$@"; else compdef ${fn} ${tree.program}; fi
`;
}
