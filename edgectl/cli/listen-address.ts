import { CliError } from "./cli-error.js";

/** Parses `HOST:PORT` (IPv6 as `[::1]:PORT`; port 0 picks a free one) for `flag`. */
export function parseListenAddress(flag: string, raw: string): { host: string; port: number } {
  const m = /^(\[[^\]]+\]|[^:]+):(\d{1,5})$/.exec(raw.trim());
  const port = m ? Number(m[2]) : Number.NaN;
  if (!m?.[1] || !Number.isInteger(port) || port > 65535)
    throw new CliError("usage", `${flag}: "${raw}" is not HOST:PORT (e.g. 127.0.0.1:9465)`);
  return { host: m[1].replace(/^\[|\]$/g, ""), port };
}
