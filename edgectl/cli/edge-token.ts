import { readFile } from "node:fs/promises";
import { readCredential } from "../../adapters/credential.js";
import { CliError } from "./cli-error.js";

/**
 * The bearer token a command sends the edge: the contents of `tokenFile` (`--token-file`) when
 * given, else the variable `name` or its systemd credential. An empty token is none: a usage
 * error naming both ways to give it. The token itself is never part of a message.
 */
export async function edgeToken(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  tokenFile: string | undefined,
): Promise<string> {
  let token = readCredential(env, name) ?? "";
  if (tokenFile !== undefined) {
    try {
      token = (await readFile(tokenFile, "utf8")).trim();
    } catch (e) {
      throw new CliError(
        "invalid-input",
        `--token-file: cannot read ${tokenFile} (${(e as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
  }
  if (!token)
    throw new CliError(
      "usage",
      `the edge's token is required: ${name}, or --token-file (an empty file is no token)`,
    );
  return token;
}
