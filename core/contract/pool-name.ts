const POOL_NAME = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;

/** True for a pool name: a DNS label. */
export function isPoolName(name: string): boolean {
  return POOL_NAME.test(name);
}
