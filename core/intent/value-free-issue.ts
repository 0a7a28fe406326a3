import type { z } from "zod";

// A field name is shown only when it reads like one: a short identifier cannot carry junk,
// control characters or a pasted secret's bulk.
const FIELD_NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,31}$/;

function typeOf(input: unknown): string {
  if (input === null) return "null";
  if (Array.isArray(input)) return "array";
  return typeof input;
}

function unknownFields(keys: readonly string[]): string {
  const named = keys.filter((k) => FIELD_NAME.test(k));
  const s = keys.length === 1 ? "" : "s";
  if (named.length === 0) return `unknown field${s}`;
  const shown = named
    .slice(0, 3)
    .map((k) => `"${k}"`)
    .join(", ");
  const rest = keys.length - Math.min(named.length, 3);
  return `unknown field${s} ${shown}${rest > 0 ? ` and ${rest} more` : ""}`;
}

function bound(kind: "at most" | "at least", origin: string, limit: number | bigint): string {
  const n = Number(limit);
  if (origin === "array" || origin === "set") return `${kind} ${n} item${n === 1 ? "" : "s"}`;
  if (origin === "string") return `${kind} ${n} character${n === 1 ? "" : "s"}`;
  return `${kind} ${n}`;
}

/**
 * A zod error map whose messages never quote the input (docs/reference.md §3.6): a value can be megabytes of
 * junk, hold control characters, or be a secret pasted into the wrong key. It says what was
 * expected, the input's type, or the schema's own options instead. Messages a schema sets itself
 * take precedence over it, so those are written value-free too.
 */
export const valueFreeIssue: z.core.$ZodErrorMap = (issue) => {
  switch (issue.code) {
    case "invalid_type":
      return `expected ${issue.expected}, got ${typeOf(issue.input)}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => String(v)).join(", ")}`;
    case "unrecognized_keys":
      return unknownFields(issue.keys);
    case "too_big":
      return bound("at most", issue.origin, issue.maximum);
    case "too_small":
      return bound("at least", issue.origin, issue.minimum);
    case "invalid_format":
      return issue.format === "datetime"
        ? "not an ISO 8601 date-time"
        : `not a valid ${issue.format}`;
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    default:
      return "invalid value";
  }
};

/** Parse options that make every zod message value-free: `schema.safeParse(x, VALUE_FREE)`. */
export const VALUE_FREE = { error: valueFreeIssue } as const;
