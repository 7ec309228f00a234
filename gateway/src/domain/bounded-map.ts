/**
 * A memo of values that are cheap to compute again (URLs, digests, parsed profiles, credential
 * objects), keyed by what snapshots or clients name, so the number of keys is not the gateway's to
 * choose: at `limit` entries, adding one forgets the entry added first. A lookup is one Map get, an
 * addition one Map set (and one delete when full).
 */
export class BoundedMap<K, V> {
  private readonly map = new Map<K, V>();
  readonly limit: number;

  constructor(limit: number) {
    if (!Number.isInteger(limit) || limit < 1)
      throw new RangeError(`limit must be a positive integer: ${limit}`);
    this.limit = limit;
  }

  get size(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    return this.map.get(key);
  }

  /** Keeps `value` under `key`, forgetting the entry added first when full; returns `value`. */
  set(key: K, value: V): V {
    if (this.map.size >= this.limit && !this.map.has(key)) {
      const first = this.map.keys().next();
      if (!first.done) this.map.delete(first.value);
    }
    this.map.set(key, value);
    return value;
  }
}
