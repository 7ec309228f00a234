import type { ServerResponse } from 'node:http';

/** Minimal SSE writer on the raw response: headers once, then frames; never throws on a gone client. */
export class SseWriter {
  readonly #res: ServerResponse;
  #open = true;

  constructor(res: ServerResponse, headers: Record<string, string>) {
    this.#res = res;
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache, no-transform',
      connection: 'keep-alive',
      'x-accel-buffering': 'no',
      ...headers,
    });
    res.on('close', () => {
      this.#open = false;
    });
  }

  get open(): boolean {
    return this.#open && !this.#res.destroyed;
  }

  data(payload: unknown): void {
    if (this.open) this.#res.write(`data: ${JSON.stringify(payload)}\n\n`);
  }

  event(name: string, payload: unknown): void {
    if (this.open) this.#res.write(`event: ${name}\ndata: ${JSON.stringify(payload)}\n\n`);
  }

  /** OpenAI's terminator (the stream still ends with `end`). */
  done(): void {
    if (this.open) this.#res.write('data: [DONE]\n\n');
  }

  end(): void {
    if (this.open) this.#res.end();
  }
}
