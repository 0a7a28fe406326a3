/** Most characters of one problem line (`key: message`), status message or CLI problem line. */
export const MAX_PROBLEM_CHARS = 200;

// C0/C1 controls, DEL, format characters (bidi overrides, zero-width), lone surrogates, and the
// Unicode line and paragraph separators: anything that could rewrite a terminal or split a line.
const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;

function escapeChar(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, "0")}`;
}

/** True when `text` is printable ASCII only: nothing in it to escape (most keys and messages). */
function printableAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/** `text` with every control and invisible character escaped as `\uXXXX` (see `safeText`), uncut. */
export function escapeUnsafe(text: string): string {
  return printableAscii(text) ? text : text.replace(UNSAFE, escapeChar);
}

/**
 * Text that is safe to show anywhere (the map's `problems`, `meta`, `/status`, logs, a terminal):
 * control and invisible characters escaped as `\uXXXX`, and at most `max` characters, the cut
 * marked with `…`. Never splits a surrogate pair. Only the first `max` characters of `text` are
 * ever read, so a megabyte of junk costs no more than a short string.
 */
export function safeText(text: string, max: number = MAX_PROBLEM_CHARS): string {
  const limit = Math.max(1, Math.floor(max));
  const head = text.length > limit + 1 ? text.slice(0, limit + 1) : text;
  const escaped = escapeUnsafe(head);
  if (escaped.length <= limit && head.length === text.length) return escaped;
  let cut = limit - 1;
  const code = escaped.charCodeAt(cut - 1);
  if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
  // Never leave half an escape sequence behind.
  const partial = /\\u(\{[0-9a-f]*|[0-9a-f]{0,3})$/.exec(escaped.slice(Math.max(0, cut - 9), cut));
  if (partial) cut -= partial[0].length;
  return `${escaped.slice(0, cut)}…`;
}

/** Length of `text` in UTF-8 bytes, without encoding it. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    } else bytes += 3;
  }
  return bytes;
}
