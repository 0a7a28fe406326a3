/*
 * CMCD text (CTA-5004) is a structured-field dictionary (RFC 8941). The Worker reads the two keys
 * it records (`bs`, `mtp`) on every request a player annotates, so the reading is one regular
 * expression that checks the whole dictionary without building it, and one scan for the two keys:
 * a parser that builds every member cost 6 µs of CPU on a player's usual 17 members, above the
 * recording's whole budget (bench: `observe.cpu_us_per_req`). It accepts and refuses exactly what
 * @svta/cml-structured-field-values does (test/worker/observe/cmcd-readings.test.ts holds it to
 * the library on generated text).
 *
 * Every alternative below starts on a character no other can start on, and every item ends where
 * only a separator may follow, so the expression has one way to match any text: it runs in time
 * linear in the text, with no backtracking to blow up on a hostile one.
 */

const KEY = "[a-z*][a-z0-9_.*-]*";
/** An integer of at most 15 digits, or a decimal of at most 12 and at most 3 after the point. */
const NUMBER = String.raw`-?(?:\d{1,12}\.\d{1,3}(?!\d)|\d{1,15}(?![\d.]))`;
const STRING = String.raw`"(?:[ !#-\[\]-~\u0080-\uffff]|\\["\\])*"`;
const TOKEN = String.raw`[A-Za-z*][\w!#$%&'*+.^\`|~:/-]*`;
/** Base64 as `atob` takes it: ASCII blanks anywhere, padding only where a length needs it. */
const B64 = String.raw`[A-Za-z0-9+/][\t\f ]*`;
const BYTES = String.raw`:[\t\f ]*(?:(?:${B64}){4})*(?:(?:${B64}){2}(?:=[\t\f ]*=[\t\f ]*)?|(?:${B64}){3}(?:=[\t\f ]*)?)?:`;
/** A date is an integer number of seconds (`@1.0` is one; `@1.5` is none). */
const DATE = String.raw`@-?(?:\d{1,12}\.0{1,3}(?!\d)|\d{1,15}(?![\d.]))`;
const BARE = `(?:${NUMBER}|${STRING}|${TOKEN}|${BYTES}|\\?[01]|${DATE})`;
const PARAMS = String.raw`(?:;\s*${KEY}(?:=${BARE})?)*`;
const ITEM = `${BARE}${PARAMS}`;
/** Items are separated by at least one space (SP, not any blank), and the list may be padded. */
const INNER = String.raw`\(\s*(?:${ITEM}(?: \s*${ITEM})*(?: \s*)?)?\)${PARAMS}`;
const MEMBER = `${KEY}(?:=(?:${INNER}|${ITEM})|${PARAMS})`;
const DICTIONARY = new RegExp(String.raw`^(?:${MEMBER}(?:\s*,\s*${MEMBER})*)?$`);

/**
 * In a checked dictionary a `"` only opens a string, so skipping strings leaves each `,` a
 * member separator: a `bs` or `mtp` right after one (or at the start) is a member's key. Its
 * value is captured when it is one the recording reads: a boolean, a number, or an inner list
 * whose first item is a number.
 */
const READ =
  /"(?:[^"\\]|\\.)*"|(?:^|,)\s*(bs|mtp)(?![a-z0-9_.*-])(?:(=)(?:\?([01])|(-?[\d.]+)|\(\s*(-?[\d.]+))?)?/g;

/** What a CMCD dictionary says of the keys the recording reads; absent when it does not name them. */
export interface CmcdReadings {
  /** `bs`: a boolean, or `null` when its value is of another type. */
  bs?: boolean | null;
  /** `mtp`: a number (an inner list's first item), or `null` when it is not one. */
  mtp?: number | null;
}

/**
 * `bs` and `mtp` of CMCD `text`, a later member of a key winning as RFC 8941 says; `null` when
 * `text` is not a structured-field dictionary (a player's malformed text counts as not sent).
 * Parameters are left aside.
 */
export function cmcdReadings(text: string): CmcdReadings | null {
  const s = text.trim();
  if (!DICTIONARY.test(s)) return null;
  const out: CmcdReadings = {};
  READ.lastIndex = 0;
  for (let m = READ.exec(s); m !== null; m = READ.exec(s)) {
    const key = m[1];
    if (key === undefined) continue;
    if (key === "bs") out.bs = m[2] === undefined ? true : m[3] === undefined ? null : m[3] === "1";
    else {
      const n = m[4] ?? m[5];
      out.mtp = n === undefined ? null : Number(n);
    }
  }
  return out;
}
