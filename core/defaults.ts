/** Default `FLOOR_POOL`: the pool that serves when there is no map at all. */
export const DEFAULT_FLOOR_POOL = "par-1";
/** Default `ORIGIN_TEMPLATE`. */
export const DEFAULT_ORIGIN_TEMPLATE = "https://{pool}.origin.example.com";
