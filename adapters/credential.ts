import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "./errors.js";

/**
 * A secret setting: the variable `name` when set, else the systemd credential of that name, the
 * file `$CREDENTIALS_DIRECTORY/name` (`LoadCredential=name:…` or `LoadCredentialEncrypted=`), read
 * by the process itself so the secret is in no environment a child could inherit. One trailing
 * newline (an editor's) is dropped. `undefined` when neither is there.
 */
export function readCredential(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
): string | undefined {
  const value = env[name];
  if (value) return value;
  const dir = env.CREDENTIALS_DIRECTORY;
  if (!dir) return undefined;
  let text: string;
  try {
    text = readFileSync(join(dir, name), "utf8");
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return undefined;
    throw new ConfigError(
      "unreadable-file",
      name,
      `cannot read the credential $CREDENTIALS_DIRECTORY/${name} (${code ?? "error"})`,
    );
  }
  return text.replace(/\r?\n$/, "") || undefined;
}
