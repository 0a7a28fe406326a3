import { Document, isScalar, visit } from "yaml";

/** What a terminal acts on or hides (a newline stays: YAML is made of lines). */
const UNSAFE = /[^\n\P{Cc}]|[\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/gu;
const HAS_UNSAFE = /[^\n\P{Cc}]|[\p{Cf}\p{Cs}\p{Zl}\p{Zp}]/u;

/** A YAML double-quoted escape for one character. */
function yamlEscape(ch: string): string {
  const cp = ch.codePointAt(0) ?? 0;
  return cp > 0xffff
    ? `\\U${cp.toString(16).padStart(8, "0")}`
    : `\\u${cp.toString(16).padStart(4, "0")}`;
}

/**
 * `value` as a YAML document (no line folding) that is safe to print on a terminal and reads
 * back as the same data: every string, key or value, holding a control or invisible character
 * is written double-quoted, where each such character becomes a `\uXXXX` escape. (The `yaml`
 * package escapes C0 controls there, but leaves C1 controls and format characters raw.)
 */
export function terminalYaml(value: unknown): string {
  const doc = new Document(value);
  visit(doc, {
    Scalar(_key, node) {
      if (isScalar(node) && typeof node.value === "string" && HAS_UNSAFE.test(node.value)) {
        node.type = "QUOTE_DOUBLE";
      }
    },
  });
  return doc.toString({ lineWidth: 0 }).replace(UNSAFE, yamlEscape);
}
