/**
 * A map handed out by {@link RoutingIndex.state} and still written by the index: shared until
 * the next write, which copies it first. Pools and health are most of a large prefix; a change
 * elsewhere then costs no copy of them.
 */
export class CopyOnWrite<K, V> {
  private map = new Map<K, V>();
  private shared = false;

  get read(): ReadonlyMap<K, V> {
    return this.map;
  }

  get write(): Map<K, V> {
    if (this.shared) {
      this.map = new Map(this.map);
      this.shared = false;
    }
    return this.map;
  }

  share(): ReadonlyMap<K, V> {
    this.shared = true;
    return this.map;
  }

  clear(): void {
    this.map = new Map();
    this.shared = false;
  }
}
