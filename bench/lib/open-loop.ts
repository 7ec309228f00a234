import { Pool } from 'undici';
import { percentiles } from '../load.ts';

/**
 * Load spread over several gateway pods the way a Service spreads it: round-robin over the pods
 * that are up. Open loop (a fixed rate, whatever the answers take) for the soak, closed loop (each
 * worker sends its next request when the previous one is answered) to find the maximum.
 */

export interface Backend {
  url: string;
  up: boolean;
  pool: Pool;
  inFlight: number;
}

export interface Window {
  /** Seconds since the run started, at the end of the window. */
  atS: number;
  sent: number;
  ok: number;
  non2xx: number;
  errors: number;
  p50: number;
  p99: number;
}

export interface Totals {
  sent: number;
  ok: number;
  /** Answers by status, 2xx included. */
  byStatus: Map<number, number>;
  /** Requests that got no answer at all (connection refused or cut). */
  errors: number;
  /** Requests not sent because `maxInFlight` were outstanding (the pods could not keep up). */
  shed: number;
}

export interface RequestShape {
  path: string;
  headers: Record<string, string>;
  body: string;
}

export class Load {
  readonly backends: Backend[];
  readonly totals: Totals = { sent: 0, ok: 0, byStatus: new Map(), errors: 0, shed: 0 };
  readonly #shape: RequestShape;
  readonly #maxInFlight: number;
  #next = 0;
  #window: { sent: number; ok: number; non2xx: number; errors: number; samples: number[] } = Load.#empty();

  constructor(urls: string[], shape: RequestShape, opts: { connections: number; maxInFlight: number }) {
    this.#shape = shape;
    this.#maxInFlight = opts.maxInFlight;
    this.backends = urls.map((url) => ({
      url,
      up: true,
      inFlight: 0,
      pool: new Pool(url, { connections: opts.connections, keepAliveTimeout: 30_000 }),
    }));
  }

  static #empty() {
    return { sent: 0, ok: 0, non2xx: 0, errors: 0, samples: [] as number[] };
  }

  inFlight(): number {
    return this.backends.reduce((n, b) => n + b.inFlight, 0);
  }

  #pick(): Backend | undefined {
    for (let i = 0; i < this.backends.length; i++) {
      const b = this.backends[(this.#next + i) % this.backends.length] as Backend;
      if (b.up) {
        this.#next = (this.#next + i + 1) % this.backends.length;
        return b;
      }
    }
    return undefined;
  }

  /** One request; resolves when it is answered or failed. */
  async one(): Promise<void> {
    const b = this.#pick();
    if (!b || this.inFlight() >= this.#maxInFlight) {
      this.totals.shed++;
      return;
    }
    this.totals.sent++;
    this.#window.sent++;
    b.inFlight++;
    const t0 = performance.now();
    try {
      const res = await b.pool.request({
        method: 'POST',
        path: this.#shape.path,
        headers: this.#shape.headers,
        body: this.#shape.body,
      });
      await res.body.arrayBuffer();
      this.totals.byStatus.set(res.statusCode, (this.totals.byStatus.get(res.statusCode) ?? 0) + 1);
      if (res.statusCode >= 200 && res.statusCode < 300) {
        this.totals.ok++;
        this.#window.ok++;
        this.#window.samples.push(performance.now() - t0);
      } else this.#window.non2xx++;
    } catch {
      this.totals.errors++;
      this.#window.errors++;
    } finally {
      b.inFlight--;
    }
  }

  /** Sends at `rps` until `stop()` returns true; calls `onWindow` every `windowMs`. */
  async openLoop(
    rps: number,
    stop: () => boolean,
    onWindow: (w: Omit<Window, 'atS'>) => void,
    windowMs = 10_000,
  ): Promise<void> {
    const tickMs = 5;
    const pending = new Set<Promise<void>>();
    let owed = 0;
    let last = performance.now();
    let windowStart = last;
    while (!stop()) {
      await new Promise((r) => setTimeout(r, tickMs));
      const now = performance.now();
      owed += ((now - last) / 1000) * rps;
      last = now;
      for (; owed >= 1; owed--) {
        const p = this.one();
        pending.add(p);
        void p.finally(() => pending.delete(p));
      }
      if (now - windowStart >= windowMs) {
        onWindow(this.takeWindow());
        windowStart = now;
      }
    }
    await Promise.allSettled([...pending]);
  }

  /** `workers` closed loops for `durationMs`; the answered rate (req/s). */
  async closedLoop(workers: number, durationMs: number): Promise<number> {
    const end = performance.now() + durationMs;
    const started = performance.now();
    const okBefore = this.totals.ok;
    await Promise.all(
      Array.from({ length: workers }, async () => {
        while (performance.now() < end) await this.one();
      }),
    );
    this.takeWindow();
    return ((this.totals.ok - okBefore) / (performance.now() - started)) * 1000;
  }

  takeWindow(): Omit<Window, 'atS'> {
    const w = this.#window;
    this.#window = Load.#empty();
    const p = percentiles(w.samples);
    return { sent: w.sent, ok: w.ok, non2xx: w.non2xx, errors: w.errors, p50: p.p50, p99: p.p99 };
  }

  async close(): Promise<void> {
    await Promise.allSettled(this.backends.map((b) => b.pool.close()));
  }
}
