/*
 * CMCD text (CTA-5004) is a structured-field dictionary (RFC 8941). The Worker reads it here
 * rather than through @svta/cml-structured-field-values, whose decoder weighs three times this
 * reader in a bundle with a size goal (bench: `worker.bundle_kib`). It accepts and refuses
 * exactly what the library does (test/worker/observe/cmcd-members.test.ts holds it to the
 * library on generated text).
 */

const SPACE = /\s*/y;
const KEY = /[a-z*][a-z0-9_.*-]*/y;
/**
 * One bare item: a number (sign, digits, fraction), a string's inside, a token, a byte
 * sequence's base64, a boolean, a date's number.
 */
const BARE =
  /(-?)(\d+)(\.\d+)?|"((?:[ !#-[\]-~\u0080-\uffff]|\\["\\])*)"|([A-Za-z*][\w!#$%&'*+.^`|~:/-]*)|:([^:\n\r\u2028\u2029]*):|\?([01])|@(-?)(\d+)(\.\d+)?/y;
const ESCAPE = /\\(.)/g;

/** Thrown inside {@link cmcdMembers} only, and caught there. */
const MALFORMED = Symbol("malformed");

function malformed(): never {
  throw MALFORMED;
}

/** An integer has at most 15 digits; a decimal at most 12, then at most 3 after the point. */
function numberOf(sign: string, int: string, fraction: string | undefined): number {
  if (fraction === undefined ? int.length > 15 : int.length > 12 || fraction.length > 4)
    malformed();
  return Number(sign + int + (fraction ?? ""));
}

/**
 * The members of a CMCD dictionary, each its value with parameters left aside (an inner list
 * is an array of its items' values; a member without a value is `true`; a token is its text; a
 * byte sequence its base64), or `null` when `text` is not a structured-field dictionary.
 */
export function cmcdMembers(text: string): Map<string, unknown> | null {
  const s = text.trim();
  let at = 0;
  const match = (re: RegExp): RegExpExecArray | null => {
    re.lastIndex = at;
    const m = re.exec(s);
    if (m) at = re.lastIndex;
    return m;
  };
  const key = (): string => match(KEY)?.[0] ?? malformed();
  const bare = (): unknown => {
    const m = match(BARE) ?? malformed();
    if (m[2] !== undefined) return numberOf(m[1] ?? "", m[2], m[3]);
    if (m[4] !== undefined) return m[4].replace(ESCAPE, "$1");
    if (m[5] !== undefined) return m[5];
    if (m[6] !== undefined) {
      atob(m[6]);
      return m[6];
    }
    if (m[7] !== undefined) return m[7] === "1";
    const date = numberOf(m[8] ?? "", m[9] ?? "", m[10]);
    return Number.isInteger(date) ? new Date(date * 1000) : malformed();
  };
  const params = (): void => {
    while (s[at] === ";") {
      at++;
      match(SPACE);
      key();
      if (s[at] === "=") {
        at++;
        bare();
      }
    }
  };
  const item = (): unknown => {
    const value = bare();
    params();
    return value;
  };
  const innerList = (): unknown[] => {
    at++;
    const items: unknown[] = [];
    for (;;) {
      match(SPACE);
      if (s[at] === ")") {
        at++;
        params();
        return items;
      }
      items.push(item());
      if (s[at] !== " " && s[at] !== ")") malformed();
    }
  };

  const members = new Map<string, unknown>();
  try {
    while (at < s.length) {
      const name = key();
      if (s[at] === "=") {
        at++;
        members.set(name, s[at] === "(" ? innerList() : item());
      } else {
        params();
        members.set(name, true);
      }
      match(SPACE);
      if (at === s.length) break;
      if (s[at] !== ",") malformed();
      at++;
      match(SPACE);
      if (at === s.length || s[at] === ",") malformed();
    }
  } catch (err) {
    if (err === MALFORMED || err instanceof DOMException) return null;
    throw err;
  }
  return members;
}
