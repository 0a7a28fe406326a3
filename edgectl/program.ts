import { Command } from "commander";
import { DEFAULT_ETCD_ENDPOINTS } from "../adapters/etcd-options.js";
import { VERSION } from "../adapters/version.js";
import { DEFAULT_PREFIX } from "../core/index.js";
import type { CommitRules } from "./apply/commit.js";
import { DEFAULT_AUDIT_KEEP, DEFAULT_AUDIT_PREFIX } from "./audit/audit-record.js";
import type { CliIo } from "./cli/cli-io.js";
import { COMMAND_HELP, commandHelpText } from "./cli/command-help.js";
import {
  DEFAULT_ETCD_TIMEOUT_MS,
  DEFAULT_LOCK_TTL_SECONDS,
  DEFAULT_MAX_TXN_OPS,
} from "./cli/edgectl-env.js";
import { applyCommand } from "./commands/apply.js";
import { boostCommand } from "./commands/boost.js";
import { canaryCommand } from "./commands/canary.js";
import { completionCommand } from "./commands/completion.js";
import { explainCommand } from "./commands/explain.js";
import { exportCommand } from "./commands/export.js";
import { heartbeatCommand } from "./commands/heartbeat.js";
import { historyCommand } from "./commands/history.js";
import { moveCommand } from "./commands/move.js";
import { observeCommand } from "./commands/observe.js";
import { planCommand } from "./commands/plan.js";
import { purgeCommand } from "./commands/purge.js";
import { rollbackCommand } from "./commands/rollback.js";
import { statusCommand } from "./commands/status.js";
import { topCommand } from "./commands/top.js";
import { unboostCommand } from "./commands/unboost.js";
import { validateCommand } from "./commands/validate.js";
import type { SettableOutput } from "./output/cli-output.js";
import { createCommandContext, withCommonOptions } from "./output/command-context.js";
import { terminalText } from "./output/terminal-text.js";

/** `edgectl --help`'s closing text: exit codes, environment, examples (docs/reference.md §6). */
export const PROGRAM_HELP = `
Exit codes:
  0  done (applied, valid, in sync)
  1  invalid input or refused (each problem named by key); status: the edge is behind
  2  apply: conflict, the epoch moved (or the lock lapsed) since the read; nothing written
  3  apply: lock/apply is held by another holder; nothing written
  4  etcd unavailable: no member answered; nothing written
  5  apply: outcome unknown, the commit may have landed (run plan)

Every command uses every endpoint: a call moves to the next member when one is down, without a
leader or slow, so losing any minority of members changes nothing; the apply commit itself is
sent once and, if its reply is lost, settled from etcd through any member that answers.

Environment:
  ETCD_ENDPOINTS            comma-separated members (default ${DEFAULT_ETCD_ENDPOINTS}); --endpoints wins
  ETCD_USERNAME, ETCD_PASSWORD, ETCD_CA_FILE, ETCD_CERT_FILE, ETCD_KEY_FILE
  ROUTING_PREFIX            etcd prefix (default ${DEFAULT_PREFIX}); --prefix wins
  FLOOR_POOL, ORIGIN_TEMPLATE   as the pusher compiles them
  EDGECTL_LOCK_TTL          lock/apply lease TTL in s (default ${DEFAULT_LOCK_TTL_SECONDS})
  EDGECTL_ETCD_TIMEOUT_MS   one request's deadline (default ${DEFAULT_ETCD_TIMEOUT_MS}); a call tries other members
                            for twice this before exit 4
  EDGECTL_MAX_TXN_OPS       operations one transaction may hold (default ${DEFAULT_MAX_TXN_OPS})
  AUDIT_PREFIX              where apply, move and rollback keep audit records (default ${DEFAULT_AUDIT_PREFIX})
  EDGECTL_AUDIT_KEEP        audit records kept, older ones pruned (default ${DEFAULT_AUDIT_KEEP})
  EDGECTL_USER              who the audit record names (default: OS user@host)
  KV_SINK, KV_*, CF_*       KV, for explain and status; PUSHER_LISTEN for status
  EDGE_URL, OBSERVE_TOKEN   the edge and its observations token, for observe and top
  NO_COLOR, TERM            colours only on a terminal, never with NO_COLOR or TERM=dumb

Output: -o json prints one JSON document on stdout (errors {"error":{"code","message"}}), with
the same exit codes; every shape is in docs/reference.md §6.

Examples:
  edgectl --endpoints http://10.0.0.1:2379,http://10.0.0.2:2379,http://10.0.0.3:2379 status
  edgectl plan routing.yaml && edgectl apply routing.yaml --yes --reason "DE to fra-1"
  edgectl move DE,FR --to fra-1 --reason "ams-1 maintenance"
  edgectl history --limit 5 && edgectl rollback 41 --reason "undo the move"
  edgectl boost DE --pool ams-1 --ttl 6h --reason "fra-1 saturated"
  edgectl heartbeat fra-1 --ttl 15 --check-url http://127.0.0.1:8081/healthz
  OBSERVE_TOKEN=… edgectl observe --edge https://edge.example.com --listen 127.0.0.1:9466
  PURGE_TOKEN=… edgectl purge https://video.example.com/live/seg-1.ts
  OBSERVE_TOKEN=… edgectl top BR --edge https://edge.example.com
  edgectl -o json explain DE | jq '{source, split}'
  source <(edgectl completion bash)

Run "edgectl COMMAND --help" for a command's examples and the environment it reads.
`;

/**
 * Builds a fresh `edgectl` program writing through `output`; `exit` receives the exit code of the
 * command that ran. In JSON mode commander's own error text is not written: `run()` reports the
 * error as the JSON error document instead. The commands that commit intent do so under
 * `commitRules`.
 */
export function buildProgram(
  io: CliIo,
  output: SettableOutput,
  exit: (code: number) => void,
  commitRules?: CommitRules,
): Command {
  const ctx = createCommandContext(io, output, exit);
  const outputConfig = {
    writeOut: (s: string) => io.stdout.write(terminalText(s)),
    writeErr: (s: string) => {
      if (output.mode === "text") io.stderr.write(terminalText(s));
    },
  };
  const program = withCommonOptions(new Command("edgectl"))
    .description(
      "Operator CLI for edge-router: routing intent, boosts, heartbeats and status in etcd",
    )
    .version(VERSION, "-V, --version", "print edgectl's version")
    .exitOverride()
    .configureOutput(outputConfig)
    .addHelpText("after", PROGRAM_HELP)
    .showHelpAfterError("(run with --help for usage)")
    .allowExcessArguments(false)
    // Runs before any subcommand's action: what only actions need is loaded here, not at start.
    .hook("preAction", (_program, actionCommand) => ctx.prepare(actionCommand));
  for (const make of [
    validateCommand,
    planCommand,
    applyCommand,
    moveCommand,
    canaryCommand,
    historyCommand,
    rollbackCommand,
    exportCommand,
    explainCommand,
    boostCommand,
    unboostCommand,
    heartbeatCommand,
    observeCommand,
    purgeCommand,
    topCommand,
    statusCommand,
    completionCommand,
  ]) {
    const cmd = make(ctx, commitRules)
      .exitOverride()
      .configureOutput(outputConfig)
      .allowExcessArguments(false);
    cmd.showHelpAfterError(`(run "edgectl ${cmd.name()} --help" for usage)`);
    const help = COMMAND_HELP[cmd.name()];
    if (help) cmd.addHelpText("after", commandHelpText(help));
    program.addCommand(cmd);
  }
  return program;
}
