import type { CompletionOption, CompletionTree } from "./completion-tree.js";

const words = (opts: readonly CompletionOption[]) =>
  opts.flatMap((o) => (o.short ? [o.short, o.long] : [o.long])).join(" ");

const flagsOf = (o: CompletionOption) => (o.short ? `${o.short}|${o.long}` : o.long);

/** A bash completion script (`source <(edgectl completion bash)`), one function, no callbacks. */
export function bashCompletion(tree: CompletionTree): string {
  const fn = `_${tree.program.replace(/[^A-Za-z0-9_]/g, "_")}`;
  const all = [...tree.globalOptions, ...tree.commands.flatMap((c) => c.options)];
  const valued = new Map<string, CompletionOption>();
  for (const o of all) if (o.takesValue) valued.set(flagsOf(o), o);
  const valueCases = [...valued.values()].map((o) =>
    o.choices
      ? `    ${flagsOf(o)}) COMPREPLY=($(compgen -W "${o.choices.join(" ")}" -- "$cur")); return ;;`
      : `    ${flagsOf(o)}) COMPREPLY=(); return ;;`,
  );
  const commandCases = tree.commands.map((c) => {
    const args = c.argChoices ? `args="${c.argChoices.join(" ")}"` : "";
    const files = c.fileArgument ? " files=1" : "";
    return `    ${c.name}) opts="${words(c.options)}" ${args}${files} ;;`;
  });
  return `# ${tree.program} completion for bash, generated from its command tree:
#   source <(${tree.program} completion bash)
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" cmd="" opts="" args="" files=0 i w
  if ((COMP_CWORD > 0)); then prev="\${COMP_WORDS[COMP_CWORD-1]}"; fi
  COMPREPLY=()
  case "$prev" in
${valueCases.join("\n")}
  esac
  for ((i = 1; i < COMP_CWORD; i++)); do
    w="\${COMP_WORDS[i]}"
    case " ${tree.commands.map((c) => c.name).join(" ")} " in
      *" $w "*) cmd="$w"; break ;;
    esac
  done
  if [[ -z "$cmd" ]]; then
    if [[ "$cur" == -* ]]; then
      COMPREPLY=($(compgen -W "${words(tree.globalOptions)}" -- "$cur"))
    else
      COMPREPLY=($(compgen -W "${tree.commands.map((c) => c.name).join(" ")}" -- "$cur"))
    fi
    return
  fi
  case "$cmd" in
${commandCases.join("\n")}
  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$opts" -- "$cur"))
  elif [[ -n "$args" ]]; then
    COMPREPLY=($(compgen -W "$args" -- "$cur"))
  elif ((files)); then
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}
complete -o default -F ${fn} ${tree.program}
`;
}
