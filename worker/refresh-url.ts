const isSpace = (c: string | undefined) =>
  c === " " || c === "\t" || c === "\n" || c === "\f" || c === "\r";
const isDigit = (c: string | undefined) => c !== undefined && c >= "0" && c <= "9";

/**
 * Where the URL of a `Refresh` value is, `[start, end)`, as a browser finds it (HTML's shared
 * declarative refresh steps): a time, then `;` or `,`, then the URL, after an optional `url=`
 * and inside optional quotes (`5; URL='/next'`, `0;https://…`, `0, url = "…"`). `null` when the
 * value names no URL: no time, or nothing after it (the page refreshes itself).
 */
export function refreshUrlRange(value: string): readonly [number, number] | null {
  const n = value.length;
  let i = 0;
  const skipSpace = () => {
    while (i < n && isSpace(value[i])) i++;
  };
  skipSpace();
  const timeStart = i;
  while (isDigit(value[i])) i++;
  if (i === timeStart && value[i] !== ".") return null;
  while (isDigit(value[i]) || value[i] === ".") i++;
  if (i < n) {
    const c = value[i];
    if (c !== ";" && c !== "," && !isSpace(c)) return null;
    skipSpace();
    if (value[i] === ";" || value[i] === ",") i++;
    skipSpace();
  }
  if (i >= n) return null;
  const rest = i;
  if (value[i] === "U" || value[i] === "u") {
    i++;
    if (value[i] !== "R" && value[i] !== "r") return [rest, n];
    i++;
    if (value[i] !== "L" && value[i] !== "l") return [rest, n];
    i++;
    skipSpace();
    if (value[i] !== "=") return [rest, n];
    i++;
    skipSpace();
  }
  const quote = value[i] === "'" || value[i] === '"' ? value[i] : undefined;
  if (quote === undefined) return [i, n];
  const close = value.indexOf(quote, i + 1);
  return [i + 1, close === -1 ? n : close];
}
