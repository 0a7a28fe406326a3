const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** Parses `30s`, `15m`, `6h`, `1d` or a plain number of seconds; `null` when malformed. */
export function parseDuration(text: string): number | null {
  const m = /^(\d{1,9})([smhd]?)$/.exec(text.trim());
  if (!m) return null;
  const seconds = Number(m[1]) * (UNITS[m[2] || "s"] ?? 1);
  return seconds > 0 ? seconds : null;
}
