/** Default `FLOOR_POOL`: the pool that serves when there is no map at all. */
export const DEFAULT_FLOOR_POOL = "par-1";
/** Default `ORIGIN_TEMPLATE`. */
export const DEFAULT_ORIGIN_TEMPLATE = "https://{pool}.origin.example.com";

/** The settings a rule's route needs. */
export interface RouteSettings {
  /** Pool used when nothing healthy is left (`FLOOR_POOL`). */
  readonly floorPool: string;
  /** Origin for pools without a `pool/` definition, with `{pool}` (`ORIGIN_TEMPLATE`). */
  readonly originTemplate: string;
}
