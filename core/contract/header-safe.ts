/** Printable ASCII and the space: every character an HTTP header value can carry as it is. */
const HEADER_SAFE = /^[\x20-\x7e]*$/;

/**
 * True when `text` can stand in an HTTP header value unchanged: printable ASCII and spaces only.
 * CR, LF and NUL would split or end the header (`Headers.set` throws on them), other control
 * characters are refused by strict HTTP stacks, and a character beyond Latin-1 is not a byte at
 * all. Every map string the Worker puts in a response or origin-request header passes this check
 * (docs/reference.md §4).
 */
export function isHeaderSafe(text: string): boolean {
  return HEADER_SAFE.test(text);
}
