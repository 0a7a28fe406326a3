import { DEFAULT_ETCD_ENDPOINTS } from "../../adapters/etcd-options.js";
import { DEFAULT_PUSHER_LISTEN } from "../../adapters/pusher-defaults.js";
import { DEFAULT_PREFIX } from "../../core/index.js";
import { DEFAULT_AUDIT_KEEP, DEFAULT_AUDIT_PREFIX } from "../audit/audit-record.js";
import {
  DEFAULT_ETCD_TIMEOUT_MS,
  DEFAULT_LOCK_TTL_SECONDS,
  DEFAULT_MAX_TXN_OPS,
} from "./edgectl-env.js";

/** What `edgectl CMD --help` adds after the options: examples and the environment it reads. */
export interface CommandHelp {
  readonly examples: readonly string[];
  /** `NAME  what it is` lines. */
  readonly env: readonly string[];
}

const ETCD = [
  `ETCD_ENDPOINTS            comma-separated members (default ${DEFAULT_ETCD_ENDPOINTS}); --endpoints wins`,
  "ETCD_USERNAME, ETCD_PASSWORD, ETCD_CA_FILE, ETCD_CERT_FILE, ETCD_KEY_FILE",
  `ROUTING_PREFIX            etcd prefix (default ${DEFAULT_PREFIX}); --prefix wins`,
  `EDGECTL_ETCD_TIMEOUT_MS   one request's deadline (default ${DEFAULT_ETCD_TIMEOUT_MS}); exit 4 after twice this`,
];
const COMPILE = ["FLOOR_POOL, ORIGIN_TEMPLATE   as the pusher compiles them"];
const KV = [
  "KV_SINK, KV_LOCAL_PERSIST, KV_NAMESPACE_ID, CF_ACCOUNT_ID, CF_API_TOKEN, CF_API_BASE_URL",
  "                          the KV the pusher writes (read only)",
];
const AUDIT = [
  `AUDIT_PREFIX              where the audit records live (default ${DEFAULT_AUDIT_PREFIX})`,
];
const COMMIT = [
  `EDGECTL_LOCK_TTL          lock/apply lease TTL in s (default ${DEFAULT_LOCK_TTL_SECONDS})`,
  `EDGECTL_MAX_TXN_OPS       operations one transaction may hold (default ${DEFAULT_MAX_TXN_OPS})`,
  ...AUDIT,
  `EDGECTL_AUDIT_KEEP        audit records kept; the commit prunes older ones (default ${DEFAULT_AUDIT_KEEP})`,
  "EDGECTL_USER              who the audit record names (default: the OS user@host)",
];
const COLOUR = ["NO_COLOR, TERM            no colours when NO_COLOR is set or TERM=dumb"];

/** Per command: examples (with `-o json`) and the variables it reads. */
export const COMMAND_HELP: Readonly<Record<string, CommandHelp>> = {
  validate: {
    examples: [
      "edgectl validate routing.yaml",
      "edgectl validate routing.json -o json | jq .rules",
    ],
    env: COLOUR,
  },
  plan: {
    examples: [
      "edgectl plan routing.yaml",
      "edgectl plan routing.yaml -o json | jq '.effect[] | {country, after: .after.shares}'",
    ],
    env: [...ETCD, ...COMPILE, ...COLOUR],
  },
  apply: {
    examples: [
      "edgectl apply routing.yaml            # shows the plan and asks",
      'edgectl apply routing.yaml --yes --reason "DE to fra-1" -o json | jq .epoch',
    ],
    env: [...ETCD, ...COMPILE, ...COMMIT, ...COLOUR],
  },
  move: {
    examples: [
      'edgectl move DE --to ams-1 --reason "fra-1 maintenance"   # ams-1, then fra-1, …',
      "edgectl move DE,FR,NL --to fra-1 --fallbacks ams-1 --yes",
      "edgectl move EU --to fra-1 --yes -o json | jq '.effect | length'",
    ],
    env: [...ETCD, ...COMPILE, ...COMMIT, ...COLOUR],
  },
  history: {
    examples: [
      "edgectl history --limit 5",
      "edgectl history -o json | jq -r '.records[] | \"\\(.epoch) \\(.by) \\(.reason)\"'",
    ],
    env: [...ETCD, ...AUDIT, ...COLOUR],
  },
  rollback: {
    examples: [
      "edgectl rollback 41   # the intent right after epoch 41 (edgectl history lists them)",
      'edgectl rollback 41 --yes --reason "the move overloaded ams-1" -o json | jq .epoch',
    ],
    env: [...ETCD, ...COMPILE, ...COMMIT, ...COLOUR],
  },
  export: {
    examples: ["edgectl export > routing.yaml", "edgectl export -o json | jq .state.countries"],
    env: [...ETCD, ...COLOUR],
  },
  explain: {
    examples: [
      "edgectl explain DE",
      "edgectl explain EU                     # a continent: its rule and the countries it covers",
      "edgectl explain DE -o json | jq '{source, split}'",
    ],
    env: [...ETCD, ...COMPILE, ...KV, ...COLOUR],
  },
  boost: {
    examples: [
      'edgectl boost DE --pool ams-1 --ttl 6h --reason "fra-1 saturated"',
      "edgectl boost DE --pool ams-1 --percent 20 --ttl 2h",
      'edgectl boost KR --attr trending=kpop-1 --ttl 6h --reason "music week"',
      "edgectl boost EU --pool par-1 --ttl 30m -o json | jq .expires_at",
    ],
    env: [...ETCD, ...COLOUR],
  },
  canary: {
    examples: [
      "edgectl canary status -o json | jq .canary.share",
      "edgectl move BR --to gru-2 --canary 10 --for 15m --yes   # start one",
      'edgectl canary abort --reason "gru-2 cold"',
    ],
    env: [...ETCD, ...AUDIT, ...COLOUR],
  },
  unboost: {
    examples: ["edgectl unboost DE", "edgectl unboost EU -o json | jq -r .outcome"],
    env: [...ETCD, ...COLOUR],
  },
  heartbeat: {
    examples: [
      "edgectl heartbeat fra-1 --ttl 15",
      "edgectl heartbeat fra-1 --check-url http://127.0.0.1:8081/healthz -o json",
      "edgectl heartbeat fra-1 --checker probe-ams --check-url https://fra-1.origin.example.com/healthz",
    ],
    env: [...ETCD, ...COLOUR],
  },
  observe: {
    examples: [
      "edgectl observe --edge https://edge.example.com --token-file /run/credentials/OBSERVE_TOKEN --listen 127.0.0.1:9466",
      "edgectl observe --edge http://127.0.0.1:8787 --interval 5 --min-samples 20 -o json",
    ],
    env: [
      ...ETCD,
      "EDGE_URL                  the edge's URL; --edge wins",
      "OBSERVE_TOKEN             the edge's observations token (the Worker secret); --token-file wins",
      "LOG_LEVEL                 log level (default info)",
      ...COLOUR,
    ],
  },
  purge: {
    examples: [
      "edgectl purge https://video.example.com/vod/42/seg-7.m4s --token-file /run/credentials/PURGE_TOKEN",
      "edgectl purge http://127.0.0.1:8787/live.m3u8 -o json | jq '.purged[].removed'",
    ],
    env: [
      "EDGE_URL                  send the purge here instead of each URL's host; --edge wins",
      "PURGE_TOKEN               the edge's purge token (the Worker secret); --token-file wins",
      ...COLOUR,
    ],
  },
  top: {
    examples: [
      "edgectl top --edge https://edge.example.com            # every country and pool, last 60 s",
      "edgectl top BR AR --edge https://edge.example.com --window 300",
      "edgectl top BR -o json | jq '.rows[] | {pool, p90: .ttfb_ms.p90, checkers: .checkers_p90_ms}'",
    ],
    env: [
      ...ETCD,
      "EDGE_URL                  the edge's URL; --edge wins",
      "OBSERVE_TOKEN             the edge's observations token (the Worker secret)",
      ...COLOUR,
    ],
  },
  status: {
    examples: [
      "edgectl status",
      "edgectl status --no-pusher -o json | jq -e .in_sync   # exit 1 when behind",
    ],
    env: [
      ...ETCD,
      ...COMPILE,
      ...KV,
      `PUSHER_LISTEN             where the pusher's /status is (default ${DEFAULT_PUSHER_LISTEN}); --pusher wins`,
      "HEARTBEAT_SECONDS         the pusher's heartbeat: KV meta older than twice this is behind",
      ...COLOUR,
    ],
  },
  completion: {
    examples: [
      "source <(edgectl completion bash)",
      "edgectl completion zsh > ~/.zfunc/_edgectl   # a directory on $fpath",
      "edgectl completion fish > ~/.config/fish/completions/edgectl.fish",
    ],
    env: [],
  },
};

/** The help text of a command: `Examples:` and `Environment:` sections. */
export function commandHelpText(help: CommandHelp): string {
  const section = (title: string, lines: readonly string[]) =>
    lines.length > 0 ? `\n${title}:\n${lines.map((l) => `  ${l}`).join("\n")}\n` : "";
  return `${section("Examples", help.examples)}${section("Environment", help.env.length > 0 ? help.env : ["(none)"])}`;
}
