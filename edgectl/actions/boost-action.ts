import type { Command } from "commander";
import { ClusterLease } from "../../adapters/cluster-lease.js";
import { withEtcdMembers } from "../../adapters/etcd-members.js";
import { EtcdUnavailableError } from "../../adapters/etcd-unavailable-error.js";
import {
  attrsProblem,
  decodeSnapshot,
  OverrideRuleSchema,
  parseDuration,
  routingKeys,
} from "../../core/index.js";
import { assertNoNewFenceViolations } from "../apply/fence-refusal.js";
import { CliError } from "../cli/cli-error.js";
import { compileOptions } from "../cli/compile-options.js";
import { ExitCode } from "../cli/exit-codes.js";
import { parseTargetArgument } from "../cli/target-argument.js";
import { readPrefixFromAny, toSnapshot } from "../etcd/read-prefix.js";
import { routeShares } from "../explain/route-shares.js";
import type { CommandContext } from "../output/command-context.js";
import { BoostShape } from "../output/shapes/boost-shape.js";
import { currentRule, parsePercent, percentBoostRule } from "../rules/percent-boost.js";

/** `boost`'s options as commander parses them. */
export interface BoostOptions {
  readonly pool?: string;
  readonly attr: readonly string[];
  readonly fallbacks?: string;
  readonly ttl: string;
  readonly reason?: string;
  readonly percent?: string;
}

/** `--attr name=value` (repeatable) as attributes; a name given twice is an error. */
function parseAttrOptions(raw: readonly string[]): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const item of raw) {
    const eq = item.indexOf("=");
    const name = eq < 0 ? item : item.slice(0, eq);
    if (eq < 0) throw new CliError("invalid-input", "--attr: expected name=value");
    if (Object.hasOwn(attrs, name))
      throw new CliError("invalid-input", "--attr: a name given twice");
    attrs[name] = item.slice(eq + 1);
  }
  return attrs;
}

/** `edgectl boost`'s action (`edgectl/commands/boost.ts` defines its arguments and options). */
export async function boostAction(
  ctx: CommandContext,
  raw: string,
  opts: BoostOptions,
  cmd: Command,
): Promise<void> {
  const { target, name: cc } = parseTargetArgument(raw);
  const attrs = parseAttrOptions(opts.attr);
  const hasAttrs = Object.keys(attrs).length > 0;
  const attrProblem = hasAttrs ? attrsProblem(attrs) : null;
  if (attrProblem !== null) throw new CliError("invalid-input", `--attr: ${attrProblem}`);
  if (opts.pool === undefined && !hasAttrs)
    throw new CliError("invalid-input", "give --pool, --attr, or both");
  if (opts.pool === undefined && opts.percent !== undefined)
    throw new CliError("invalid-input", "--percent needs --pool");
  const percent = opts.percent === undefined ? undefined : parsePercent(opts.percent);
  if (percent !== undefined && opts.fallbacks)
    throw new CliError(
      "invalid-input",
      "--percent keeps the current rule's fallbacks: drop --fallbacks",
    );
  const ttl = parseDuration(opts.ttl);
  if (ttl === null)
    throw new CliError("invalid-input", `--ttl: "${opts.ttl}" is not a duration like 30s, 15m, 6h`);
  const fallbacks = (opts.fallbacks ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const parsed = OverrideRuleSchema.safeParse({
    // Checked again against the current rule once etcd is read when --pool is not given.
    primary: opts.pool ?? "placeholder",
    fallbacks,
    ...(opts.reason !== undefined ? { reason: opts.reason } : {}),
  });
  if (!parsed.success) {
    throw new CliError(
      "invalid-input",
      "invalid override",
      parsed.error.issues.map((i) => `${i.path.length ? `${i.path.join(".")}: ` : ""}${i.message}`),
    );
  }
  const rule = parsed.data;
  const settings = ctx.settings(cmd);
  const key = routingKeys(settings.prefix).override(cc);
  await withEtcdMembers(settings, async (members) => {
    const before = toSnapshot(await readPrefixFromAny(members, settings.prefix));
    const state = decodeSnapshot(before, settings.prefix);
    const split =
      percent === undefined ? undefined : percentBoostRule(state, target, rule.primary, percent);
    const kept = opts.pool === undefined ? currentRule(state, target) : undefined;
    if (opts.pool === undefined && !kept)
      throw new CliError(
        "invalid-input",
        "--attr without --pool keeps the current rule, and there is none: give --pool",
      );
    const base = kept?.[1] ?? rule;
    const chain = split ? [split.primary, ...split.fallbacks] : [base.primary, ...base.fallbacks];
    const unknown = chain.filter((p) => !state.pools.has(p));
    if (unknown.length > 0) {
      throw new CliError(
        "unknown-pool",
        `unknown pool${unknown.length > 1 ? "s" : ""} ${unknown.map((p) => `"${p}"`).join(", ")}: no pool/ definition in ${settings.prefix}`,
      );
    }
    const boostWeights = split?.weights ?? base.weights;
    const proposed = JSON.stringify({
      primary: split?.primary ?? base.primary,
      fallbacks: [...(split?.fallbacks ?? base.fallbacks)],
      ...(boostWeights ? { weights: { ...boostWeights } } : {}),
      expires_at: new Date(Date.now() + ttl * 1000).toISOString(),
    });
    assertNoNewFenceViolations(
      before,
      {
        revision: before.revision,
        entries: [...before.entries.filter((e) => e.key !== key), { key, value: proposed }],
      },
      compileOptions(settings, null),
      `boost ${cc}`,
    );
    const lease = await ClusterLease.grant(members, ttl);
    // The lease's end as the boost's promise: etcd restarts lease TTLs on a leader change, so
    // the compiler ends the boost at expires_at even while the lease lives on.
    const expiresAt = new Date(lease.grantedAt + lease.ttlSeconds * 1000).toISOString();
    const weights = split?.weights ?? base.weights;
    const written = {
      primary: split?.primary ?? base.primary,
      fallbacks: [...(split?.fallbacks ?? base.fallbacks)],
      ...(weights ? { weights: { ...weights } } : {}),
      ...(hasAttrs ? { attrs } : {}),
      ...(rule.reason !== undefined ? { reason: rule.reason } : {}),
      expires_at: expiresAt,
    };
    const value = JSON.stringify(written);
    try {
      // a put under our own fresh lease may be sent again: the second one writes the same
      await members.any(`write override/${cc}`, (c, call) =>
        c.put(key).value(value).lease(lease.id).options(call).exec(),
      );
    } catch (e) {
      // the key goes with its lease, so a failed boost leaves nothing behind
      await lease.revoke().catch((r: unknown) => {
        if (!(r instanceof EtcdUnavailableError)) throw r;
        throw new CliError(
          "outcome-unknown",
          `outcome unknown: override/${cc} may have been written under lease ${lease.hex}, which no member would revoke; it stops routing at ${expiresAt} (run explain ${cc}, or unboost ${cc} once etcd answers)`,
        );
      });
      throw e;
    }
    const shares = split
      ? routeShares({
          pool: split.primary,
          weights: Object.entries(split.weights).map(([pool, weight]) => ({ pool, weight })),
        })
      : null;
    ctx.emit(
      {
        key: `override/${cc}`,
        value: written,
        split: shares,
        split_base: split?.base ?? null,
        ttl: opts.ttl,
        lease: { id: lease.id, hex: lease.hex },
        expires_at: expiresAt,
      },
      {
        schema: BoostShape,
        text: (r) => [
          `${r.key} → ${chain.join(" > ")}${
            r.split
              ? ` split ${r.split.map((x) => `${x.pool} ${x.percent}%`).join(" · ")} (from ${r.split_base})`
              : ""
          }${
            r.value.attrs
              ? ` with ${Object.entries(r.value.attrs)
                  .map(([n, v]) => `${n}=${v}`)
                  .join(" ")}`
              : ""
          } for ${r.ttl}`,
          `lease ${r.lease.hex} (${r.lease.id}), expires ${r.expires_at}`,
        ],
      },
    );
  });
  ctx.exit(ExitCode.ok);
}
