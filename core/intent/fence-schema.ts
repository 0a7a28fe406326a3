import { z } from "zod";
import { CONTINENT_CODES } from "../contract/continents.js";
import { isCountryCode } from "../contract/countries.js";
import type { Fence } from "../contract/fence.js";
import { isPoolName } from "../contract/pool-name.js";

/** Most countries, continents or regions one fence may list. */
export const MAX_FENCE_ITEMS = 300;

const countryCode = z.string().refine(isCountryCode, { message: "not an ISO 3166-1 alpha-2 code" });

/** A list without repeats (the message never quotes an item: it may be any junk). */
function distinct<T extends z.ZodType<string>>(item: T) {
  return z
    .array(item)
    .max(MAX_FENCE_ITEMS, `at most ${MAX_FENCE_ITEMS} items`)
    .refine((xs) => new Set(xs).size === xs.length, { message: "lists an item twice" });
}

/**
 * `fence/{name}` (docs/reference.md §10): the countries it covers (listed, plus every country of
 * the listed continents), the `pool/` regions their viewers may be served from, and the floor
 * pool (inside the fence) used when none of a covered country's pools is left.
 */
export const FenceSchema = z
  .object({
    countries: distinct(countryCode).default([]),
    continents: distinct(z.enum(CONTINENT_CODES)).default([]),
    regions: distinct(z.string().min(1).max(64)).min(1, "at least 1 region"),
    floor: z.string().refine(isPoolName, { message: "not a valid pool name (a DNS label)" }),
  })
  .strict();
// The schema's output and the contract's `Fence` are one shape: each must stay assignable to the other.
const _fenceOut: Fence = {} as z.output<typeof FenceSchema>;
const _fenceIn: z.output<typeof FenceSchema> = {} as Fence;
void _fenceOut;
void _fenceIn;
