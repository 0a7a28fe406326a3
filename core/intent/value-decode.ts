import type { Fence } from "../contract/fence.js";
import { type CanaryJudgement, CanaryJudgementSchema } from "./canary-judgement-schema.js";
import { type Canary, CanarySchema } from "./canary-schema.js";
import { FenceSchema } from "./fence-schema.js";
import { issueProblemCode } from "./issue-problem-code.js";
import type { ParsedKey } from "./keys.js";
import { type Observed, ObservedSchema } from "./observed-schema.js";
import { type ProblemCode, problem } from "./problem.js";
import {
  type CountryRule,
  CountryRuleSchema,
  EpochSchema,
  type Health,
  HealthSchema,
  joinPath,
  MAX_VALUE_BYTES,
  type OverrideRule,
  OverrideRuleSchema,
  type PoolDef,
  PoolDefSchema,
} from "./schema.js";
import { VALUE_FREE } from "./value-free-issue.js";

/** A value decoded and validated, or the problem that stopped it. */
export type Decoded<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly code: ProblemCode; readonly message: string };

/** The schema surface decoding needs (zod's `safeParse` with the value-free error map). */
export interface ValueSchema<T> {
  safeParse(
    x: unknown,
    params: typeof VALUE_FREE,
  ): {
    success: boolean;
    data?: T;
    error?: { issues: { path: PropertyKey[]; message: string; params?: unknown }[] };
  };
}

const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/** A value as UTF-8 text, refusing values over 64 KiB and bytes that are not UTF-8. */
export function decodeText(value: string | Uint8Array): Decoded<string> {
  const bytes = typeof value === "string" ? value.length * 3 : value.byteLength;
  if (bytes > MAX_VALUE_BYTES) {
    const size = typeof value === "string" ? new TextEncoder().encode(value).byteLength : bytes;
    if (size > MAX_VALUE_BYTES) {
      return { ok: false, code: "too-large", message: `value is ${size} bytes, over 64 KiB` };
    }
  }
  if (typeof value === "string") return { ok: true, value };
  try {
    return { ok: true, value: utf8.decode(value) };
  } catch {
    return { ok: false, code: "not-utf8", message: "value is not UTF-8 text" };
  }
}

/** A value as JSON validated by `schema`; messages never quote the value (docs/reference.md §3.6). */
export function decodeJson<T>(value: string | Uint8Array, schema: ValueSchema<T>): Decoded<T> {
  const text = decodeText(value);
  if (!text.ok) return text;
  let raw: unknown;
  try {
    raw = JSON.parse(text.value);
  } catch {
    // JSON.parse's own message quotes the text: never shown.
    return { ok: false, code: "invalid-json", message: "invalid JSON" };
  }
  const parsed = schema.safeParse(raw, VALUE_FREE);
  if (parsed.success) return { ok: true, value: parsed.data as T };
  const issues = parsed.error?.issues ?? [];
  const message = issues
    .map((i) => (i.path.length ? `${joinPath("", i.path)}: ${i.message}` : i.message))
    .join("; ");
  const code = issues.map(issueProblemCode).find((c) => c !== "invalid-value") ?? "invalid-value";
  return { ok: false, code, message };
}

function decodeEpoch(value: string | Uint8Array): Decoded<number> {
  const text = decodeText(value);
  if (!text.ok) return { ok: false, code: "invalid-epoch", message: text.message };
  const r = EpochSchema.safeParse(text.value.trim());
  return r.success
    ? { ok: true, value: r.data }
    : { ok: false, code: "invalid-epoch", message: "must be a decimal integer" };
}

/** Decodes a value as its key's family says (`null` for keys that hold no routing value). */
export function decodeFor(parsed: ParsedKey, value: string | Uint8Array): Decoded<unknown> | null {
  switch (parsed.kind) {
    case "epoch":
      return decodeEpoch(value);
    case "country":
    case "continent":
      return decodeJson<CountryRule>(value, CountryRuleSchema);
    case "override":
    case "continent-override":
      return decodeJson<OverrideRule>(value, OverrideRuleSchema);
    case "pool":
      return decodeJson<PoolDef>(value, PoolDefSchema);
    case "health":
      return decodeJson<Health>(value, HealthSchema);
    case "fence":
      return decodeJson<Fence>(value, FenceSchema);
    case "observed":
      return decodeJson<Observed>(value, ObservedSchema);
    case "canary":
      return decodeJson<Canary>(value, CanarySchema);
    case "canary-judgement":
      return decodeJson<CanaryJudgement>(value, CanaryJudgementSchema);
    default:
      return null;
  }
}

/** The problem a key and its decoded value amount to, if any. */
export function problemOf(rel: string, parsed: ParsedKey, decoded: Decoded<unknown> | null) {
  if (parsed.kind === "unknown") return problem(rel, "unknown-key", "unknown key, ignored");
  if (parsed.kind === "invalid") return problem(rel, "invalid-key", parsed.reason);
  if (!decoded || decoded.ok) return null;
  const suffix =
    parsed.kind === "observed"
      ? " (observation not counted)"
      : parsed.kind === "canary"
        ? " (no canary: every viewer routes by the stable intent)"
        : parsed.kind !== "health"
          ? ""
          : parsed.checker === undefined
            ? " (pool treated as unhealthy)"
            : " (checker not counted)";
  return problem(rel, decoded.code, `${decoded.message}${suffix}`);
}
