import type { Etcd3 } from "etcd3";
import { COUNTRIES } from "../../../testkit/sample-countries.js";
import { randomRule } from "./intent-writer.js";

/** Makes `count` revisions of valid country puts (concurrently); resolves to the last revision. */
export async function writeRevisions(
  client: Etcd3,
  prefix: string,
  count: number,
  r: () => number,
  concurrency = 32,
): Promise<number> {
  let next = 0;
  let last = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next += 1;
        const cc = COUNTRIES[Math.floor(r() * COUNTRIES.length)] ?? "DE";
        const res = await client.put(`${prefix}country/${cc}`).value(randomRule(r)).exec();
        last = Math.max(last, Number(res.header.revision));
      }
    }),
  );
  return last;
}
