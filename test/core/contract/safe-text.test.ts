import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeUnsafe, safeText } from "../../../core/contract/safe-text.js";

const UNSAFE = /[\p{Cc}\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;
const reference = (text: string) =>
  text.replace(UNSAFE, (ch) => {
    const cp = ch.codePointAt(0) ?? 0;
    return cp > 0xffff ? `\\u{${cp.toString(16)}}` : `\\u${cp.toString(16).padStart(4, "0")}`;
  });

describe("escapeUnsafe", () => {
  it("escapes exactly what the Unicode classes name, printable ASCII or not", () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: "binary" }),
          fc.string({ unit: "grapheme-ascii" }),
          fc.string({ unit: fc.constantFrom("a", "\u007f", "\u001f", " ", "~", "é", "\u202e") }),
        ),
        (text) => {
          expect(escapeUnsafe(text)).toBe(reference(text));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("leaves printable ASCII as it is, and escapes DEL and the C0 controls at its edges", () => {
    expect(escapeUnsafe("country/DE: ok ~")).toBe("country/DE: ok ~");
    expect(escapeUnsafe("a\u007fb\u001fc")).toBe("a\\u007fb\\u001fc");
    expect(safeText(" ~".repeat(3), 4)).toBe(" ~ …");
  });
});
