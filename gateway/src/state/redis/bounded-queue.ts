/**
 * FIFO with a fixed capacity that evicts its oldest item when full: while Redis is away, the newest
 * settlements are the ones worth keeping. The array is compacted only after many shifts, so taking
 * from the front is O(1) amortised.
 */
export class BoundedQueue<T> {
  readonly capacity: number;
  #items: T[] = [];
  #head = 0;

  constructor(capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new RangeError('queue capacity must be a positive integer');
    this.capacity = capacity;
  }

  get size(): number {
    return this.#items.length - this.#head;
  }

  /** Appends `item`; returns the oldest item when it had to make room. */
  push(item: T): T | undefined {
    this.#items.push(item);
    return this.size > this.capacity ? this.#shift() : undefined;
  }

  /** The oldest item, left in place. */
  peek(): T | undefined {
    return this.size > 0 ? this.#items[this.#head] : undefined;
  }

  /** Removes and returns up to `n` items from the front, oldest first. */
  take(n: number): T[] {
    const end = Math.min(this.#items.length, this.#head + n);
    const out = this.#items.slice(this.#head, end);
    this.#head = end;
    this.#compact();
    return out;
  }

  /** Puts `items` (older than everything queued) back at the front; returns the oldest that no longer fit. */
  putBack(items: T[]): T[] {
    this.#items = items.concat(this.#items.slice(this.#head));
    this.#head = 0;
    const over = this.size - this.capacity;
    return over > 0 ? this.take(over) : [];
  }

  #shift(): T | undefined {
    const item = this.#items[this.#head];
    this.#head++;
    this.#compact();
    return item;
  }

  #compact(): void {
    if (this.#head === this.#items.length) {
      this.#items = [];
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
  }
}
