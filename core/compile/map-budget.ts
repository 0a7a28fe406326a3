import type { CompiledMap } from "../contract/compiled-map.js";
import { safeText, utf8Length } from "../contract/safe-text.js";
import { formatProblem, type Problem, type ProblemCode } from "../intent/problem.js";
import { serializeMap } from "./map-serialize.js";

/** Most entries in a compiled map's `problems`; the rest are counted by code in the last ones. */
export const MAX_MAP_PROBLEMS = 1000;
/** Default byte budget of the `routes` document (docs/reference.md §3.6). */
export const DEFAULT_ROUTES_BUDGET_BYTES = 1024 * 1024;

const CODES: readonly ProblemCode[] = [
  "invalid-json",
  "invalid-value",
  "too-large",
  "not-utf8",
  "dangling-reference",
  "missing-default",
  "invalid-epoch",
  "invalid-key",
  "unknown-key",
];

// Junk keys (invalid or unknown names) are listed after the problems with keys the compiler uses,
// so a flood of them is what gets summarised, never a broken rule.
const rank = (code: ProblemCode) => (code === "unknown-key" ? 2 : code === "invalid-key" ? 1 : 0);

/** Orders problems for listing: problems of routing keys first, junk keys last; then by key. */
export function compareProblems(a: Problem, b: Problem): number {
  const r = rank(a.code) - rank(b.code);
  if (r !== 0) return r;
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * `problems` in listing order ({@link compareProblems}), repeats (same key, code and message)
 * dropped, the first of each kept. Sorted first, so a repeat is looked for only among the
 * problems of its own key: no index of every key is built (most keys have one problem).
 */
export function listingProblems(problems: readonly Problem[]): Problem[] {
  const sorted = [...problems].sort(compareProblems);
  const out: Problem[] = [];
  // The listed problems of the current key and rank: where a repeat would be.
  let run = 0;
  for (const p of sorted) {
    const last = out[out.length - 1];
    if (last === undefined || compareProblems(last, p) !== 0) run = out.length;
    let repeat = false;
    for (let i = run; i < out.length && !repeat; i++) {
      const q = out[i];
      repeat = q !== undefined && q.code === p.code && q.message === p.message;
    }
    if (!repeat) out.push(p);
  }
  return out;
}

function summary(omitted: ReadonlyMap<ProblemCode, number>): string[] {
  return CODES.filter((code) => (omitted.get(code) ?? 0) > 0).map(
    (code) => `… and ${omitted.get(code)} more ${code} problems`,
  );
}

const entryBytes = (line: string) => utf8Length(JSON.stringify(line)) + 1;

/**
 * The `problems` entries of a map: as many problems (already ordered) as fit both
 * `MAX_MAP_PROBLEMS` and the byte budget beside the rest of the map (`base`, whose own
 * `problems` are ignored), and one line per problem code counting the ones left out. Routes are
 * never cut: when they alone exceed the budget only the counts remain.
 */
export function fitProblems(
  base: CompiledMap,
  problems: readonly Problem[],
  budgetBytes: number,
): string[] {
  // Nothing to fit: no need to measure the map (its routes are never cut anyway).
  if (problems.length === 0) return [];
  const cap =
    problems.length <= MAX_MAP_PROBLEMS ? problems.length : MAX_MAP_PROBLEMS - CODES.length;
  const lines = problems.slice(0, cap).map(formatProblem);
  const omitted = new Map<ProblemCode, number>();
  for (const p of problems.slice(cap)) omitted.set(p.code, (omitted.get(p.code) ?? 0) + 1);
  const baseBytes = utf8Length(serializeMap({ ...base, problems: [] }));
  let listedBytes = lines.reduce((sum, line) => sum + entryBytes(line), 0);
  for (let n = lines.length; ; n--) {
    const counts = summary(omitted);
    const total = baseBytes + listedBytes + counts.reduce((sum, l) => sum + entryBytes(l), 0);
    if (total <= budgetBytes || n === 0) return [...lines.slice(0, n), ...counts];
    const dropped = problems[n - 1];
    listedBytes -= entryBytes(lines[n - 1] ?? "");
    if (dropped) omitted.set(dropped.code, (omitted.get(dropped.code) ?? 0) + 1);
  }
}

/**
 * Problem lines bounded for any document that lists them (`meta`, `/status`): each one safe and
 * at most `MAX_PROBLEM_CHARS`, at most `MAX_MAP_PROBLEMS` of them, the rest counted in the last.
 */
export function boundProblemLines(lines: readonly string[]): string[] {
  if (lines.length <= MAX_MAP_PROBLEMS) return lines.map((l) => safeText(l));
  const kept = lines.slice(0, MAX_MAP_PROBLEMS - 1).map((l) => safeText(l));
  return [...kept, `… and ${lines.length - kept.length} more problems`];
}
