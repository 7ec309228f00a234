/**
 * An upstream answer read straight off undici's dispatch handler. `Pool.request` wraps every answer
 * in a Node Readable, an AbortSignal listener and an AsyncResource; the gateway reads a body once,
 * whole or as an iteration, so those cost allocations and ticks on every call and buy nothing.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

/** Bytes buffered by an iterating reader before the socket is paused (a slow consumer of a stream). */
const HIGH_WATER = 64 * 1024;

class BodyDestroyed extends Error {
  readonly code = 'UND_ERR_ABORTED';
}

/**
 * A body received once. Read it whole (`text`, `arrayBuffer`) or iterate its chunks; ending an
 * iteration early, or `destroy()`, aborts the upstream request so the socket is not left half-read.
 */
export class UpstreamBody implements AsyncIterable<Buffer> {
  #chunks: Buffer[] = [];
  #head = 0;
  #bytes = 0;
  #ended = false;
  #error: Error | null = null;
  #wake: (() => void) | null = null;
  /** Reading the whole body: never pause the socket for it. */
  #whole = false;
  #destroyed = false;
  readonly #controller: Dispatcher.DispatchController;

  constructor(controller: Dispatcher.DispatchController) {
    this.#controller = controller;
  }

  get destroyed(): boolean {
    return this.#destroyed;
  }

  /** @internal the dispatch handler's side */
  push(chunk: Buffer): void {
    if (this.#destroyed) return;
    this.#chunks.push(chunk);
    this.#bytes += chunk.length;
    if (!this.#whole && this.#bytes >= HIGH_WATER) this.#controller.pause();
    this.#notify();
  }

  /** @internal */
  end(): void {
    this.#ended = true;
    this.#notify();
  }

  /** @internal */
  fail(err: Error): void {
    if (this.#error === null) this.#error = err;
    this.#notify();
  }

  #notify(): void {
    const wake = this.#wake;
    if (wake !== null) {
      this.#wake = null;
      wake();
    }
  }

  #wait(): Promise<void> {
    return new Promise((resolve) => {
      this.#wake = resolve;
    });
  }

  async #all(): Promise<Buffer> {
    this.#whole = true;
    if (this.#controller.paused) this.#controller.resume();
    while (!this.#ended && this.#error === null) await this.#wait();
    if (this.#error !== null) throw this.#error;
    const parts = this.#head === 0 ? this.#chunks : this.#chunks.slice(this.#head);
    this.#chunks = [];
    this.#head = 0;
    return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, this.#bytes);
  }

  /** The body as UTF-8 text, without a leading byte order mark. */
  async text(): Promise<string> {
    const buf = await this.#all();
    const bom = buf.length > 2 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf;
    return buf.toString('utf8', bom ? 3 : 0);
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    const buf = await this.#all();
    return buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength) as ArrayBuffer;
  }

  /** Stops reading: aborts the upstream request if it has not ended. Idempotent. */
  destroy(err?: Error): void {
    if (this.#destroyed) return;
    this.#destroyed = true;
    this.#chunks = [];
    this.#head = 0;
    if (!this.#ended && this.#error === null) {
      const reason = err ?? new BodyDestroyed('upstream body destroyed before its end');
      this.#error = reason;
      this.#controller.abort(reason);
    }
    this.#notify();
  }

  async next(): Promise<IteratorResult<Buffer, undefined>> {
    for (;;) {
      if (this.#head < this.#chunks.length) {
        const chunk = this.#chunks[this.#head] as Buffer;
        this.#chunks[this.#head++] = EMPTY;
        this.#bytes -= chunk.length;
        if (this.#head === this.#chunks.length) {
          this.#chunks.length = 0;
          this.#head = 0;
        }
        if (this.#controller.paused && this.#bytes < HIGH_WATER) this.#controller.resume();
        return { done: false, value: chunk };
      }
      if (this.#error !== null) throw this.#error;
      if (this.#ended || this.#destroyed) return { done: true, value: undefined };
      await this.#wait();
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<Buffer, undefined> {
    return {
      next: () => this.next(),
      return: async () => {
        this.destroy();
        return { done: true, value: undefined };
      },
    };
  }
}

const EMPTY = Buffer.alloc(0);

export interface UpstreamHead {
  status: number;
  headers: IncomingHttpHeaders;
  body: UpstreamBody;
}

/**
 * The dispatch handler of one upstream call: settles with the head once the final status arrived,
 * then feeds the body. `abort` works at any point, also while the request waits for a socket: the
 * caller is answered at once and the request is aborted when undici starts it.
 */
export class UpstreamCall implements Dispatcher.DispatchHandler {
  readonly head: Promise<UpstreamHead>;
  #resolve!: (head: UpstreamHead) => void;
  #reject!: (err: Error) => void;
  #controller: Dispatcher.DispatchController | null = null;
  #body: UpstreamBody | null = null;
  #abortedWith: Error | null = null;
  #settled = false;

  constructor() {
    this.head = new Promise<UpstreamHead>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
  }

  abort(err: Error): void {
    if (this.#abortedWith !== null) return;
    this.#abortedWith = err;
    if (this.#controller !== null) this.#controller.abort(err);
    else this.#fail(err);
  }

  #fail(err: Error): void {
    if (this.#body !== null) this.#body.fail(err);
    else if (!this.#settled) {
      this.#settled = true;
      this.#reject(err);
    }
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#abortedWith !== null) {
      controller.abort(this.#abortedWith);
      return;
    }
    this.#controller = controller;
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    if (statusCode < 200 || this.#settled) return;
    this.#settled = true;
    this.#body = new UpstreamBody(controller);
    this.#resolve({ status: statusCode, headers, body: this.#body });
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#body?.push(chunk);
  }

  onResponseEnd(): void {
    this.#body?.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController | null, err: Error): void {
    this.#fail(err);
  }
}
