// pino's fields and the log schema's base fields (adapters/logger.ts): the terminal names the program.
const DROP = new Set([
  ...["level", "time", "pid", "hostname", "name", "msg", "event", "v"],
  ...["service", "version", "instance"],
]);
const LEVELS: Readonly<Record<number, string>> = { 40: "WARN ", 50: "ERROR ", 60: "FATAL " };

function show(value: unknown): string {
  if (typeof value === "string") return /\s/.test(value) ? JSON.stringify(value) : value;
  return JSON.stringify(value);
}

/**
 * Turns a JSON log line (pino, `edgectl heartbeat`) into `message key=value …` for the terminal;
 * anything else is returned unchanged.
 */
export function compactJsonLine(line: string): string {
  if (!line.startsWith("{")) return line;
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch {
    return line;
  }
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) return line;
  const rec = obj as Record<string, unknown>;
  const head = [rec.msg, rec.event].filter((v) => typeof v === "string").join(" ");
  const level = typeof rec.level === "number" ? (LEVELS[rec.level] ?? "") : "";
  const fields = Object.entries(rec)
    .filter(([k]) => !DROP.has(k))
    .map(([k, v]) => `${k}=${show(v)}`)
    .join(" ");
  return `${level}${head}${head && fields ? " " : ""}${fields}`;
}
