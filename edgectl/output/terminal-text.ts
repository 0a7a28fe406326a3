import { colourMarks, mayHoldColourMark } from "./colour-mark.js";

/**
 * What may not reach a terminal: every control and invisible character (C0 and C1 controls, DEL,
 * format characters such as bidi overrides, lone surrogates, line and paragraph separators), but
 * a newline and a tab. ESC is one of them, so every escape sequence of the text is escaped.
 */
const UNSAFE = /[^\n\t\P{Cc}]|[\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;

function escapeCodePoint(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, "0")}`;
}

const escapeText = (text: string) => text.replace(UNSAFE, escapeCodePoint);

/**
 * Text as edgectl writes it in text mode (docs/reference.md §6, "Output"): whatever etcd, KV or
 * a file put in it, no escape sequence reaches the terminal (no title, no clear screen, no
 * cursor moves, no hyperlinks, no colours) and nothing invisible reorders it. The only escape
 * sequences written are the colours `paint` asked for with its marks (`colourMark`), which no
 * other text can forge. Commands escape what they quote at the source too (`escapeUnsafe`): this
 * is the last line, over every line written.
 */
export function terminalText(text: string): string {
  if (!mayHoldColourMark(text)) return escapeText(text);
  let out = "";
  let last = 0;
  for (const m of text.matchAll(colourMarks())) {
    out += `${escapeText(text.slice(last, m.index))}\u001b[${m[1]}m`;
    last = m.index + m[0].length;
  }
  return out + escapeText(text.slice(last));
}

/** `\uXXXX` for one UTF-16 unit: a JSON escape. */
function jsonEscape(ch: string): string {
  let out = "";
  for (let i = 0; i < ch.length; i++) out += `\\u${ch.charCodeAt(i).toString(16).padStart(4, "0")}`;
  return out;
}

/** Characters `JSON.stringify` leaves raw that a terminal acts on or hides (a newline stays). */
const JSON_UNSAFE = /[^\n\P{Cc}]|[\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;

/**
 * JSON text (one document, or JSON lines) with every C1 control, format character, lone
 * surrogate and line separator escaped as `\uXXXX` (`JSON.stringify` escapes only C0 controls,
 * and outside strings JSON has none of these): the same documents, as a JSON parser reads them
 * back, safe to print on a terminal.
 */
export function terminalJsonText(json: string): string {
  return json.replace(JSON_UNSAFE, jsonEscape);
}

/** `JSON.stringify(value)` made safe for a terminal by `terminalJsonText`. */
export function terminalJson(value: unknown): string {
  return terminalJsonText(JSON.stringify(value));
}
