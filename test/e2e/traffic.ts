/** The e2e suite's clients: steady keep-alive load with its failures counted, and an SSE reader. */

export interface LoadResult {
  ok: number;
  failed: number;
  /** Failure reasons (HTTP status and body start, or the socket error code) and their counts. */
  errors: Record<string, number>;
}

/**
 * `concurrency` clients sending `request()` back to back over fetch's keep-alive pool until
 * stop(); a request fails unless it answers 200 with a body `ok(body)` accepts.
 */
export function steadyLoad(
  concurrency: number,
  request: () => Promise<Response>,
  ok: (body: string) => boolean,
): { total: () => number; stop: () => Promise<LoadResult> } {
  const result: LoadResult = { ok: 0, failed: 0, errors: {} };
  const fail = (reason: string) => {
    result.failed++;
    result.errors[reason] = (result.errors[reason] ?? 0) + 1;
  };
  let running = true;
  const worker = async () => {
    while (running) {
      try {
        const res = await request();
        const body = await res.text();
        if (res.status === 200 && ok(body)) result.ok++;
        else fail(`HTTP ${res.status} ${body.slice(0, 120)}`);
      } catch (e) {
        const cause = (e as { cause?: { code?: string; message?: string } }).cause;
        fail(cause?.code ?? cause?.message ?? String(e));
      }
    }
  };
  const workers = Array.from({ length: concurrency }, worker);
  return {
    total: () => result.ok + result.failed,
    async stop() {
      running = false;
      await Promise.all(workers);
      return result;
    },
  };
}

export interface SseOutcome {
  /** Every `data:` event, in order. */
  events: string[];
  /** The error the body's reader threw (a reset), or ''. */
  error: string;
}

/** Reads an SSE body to its end; `onEvents(n)` sees the count as events arrive. */
export async function readSse(res: Response, onEvents: (n: number) => Promise<void>): Promise<SseOutcome> {
  const reader = res.body?.getReader();
  if (!reader) throw new Error('no body');
  const decoder = new TextDecoder();
  let text = '';
  let error = '';
  for (;;) {
    let chunk: Awaited<ReturnType<typeof reader.read>>;
    try {
      chunk = await reader.read();
    } catch (e) {
      error = String((e as { cause?: unknown }).cause ?? e);
      break;
    }
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
    await onEvents(text.split('\n\n').length - 1);
  }
  return { events: text.split('\n\n').filter((e) => e.startsWith('data: ')), error };
}
