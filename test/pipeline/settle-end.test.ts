import { describe, expect, it } from 'vitest';
import { GatewayError } from '#gateway/errors/index';
import type { Progress } from '#gateway/pipeline/exchange';
import type { Ending, Finished } from '#gateway/pipeline/finished';
import type { Prepared } from '#gateway/pipeline/prepare';
import type { Answer, StreamEnd } from '#gateway/pipeline/result';
import { settleEnd } from '#gateway/pipeline/settle';
import type { StreamEvent } from '#gateway/providers/types';
import { NO_TRACE } from '#gateway/tracing/off';

/**
 * settleEnd, the one call by which the owner of a request (the HTTP layer, the job handler, a
 * summary) settles it: with its own facts alone when no exchange was opened, and for a stream only
 * once the stream has ended, its end folded into the result.
 */

const ending = (over: Partial<Ending> = {}): Ending => ({
  id: 'req-1',
  surface: 'native',
  type: 'request',
  method: 'POST',
  path: '/v1/ai',
  httpStatus: 200,
  project: undefined,
  keyId: undefined,
  error: undefined,
  aborted: false,
  trace: NO_TRACE,
  ...over,
});

// Settle carries the prepared request through untouched; nothing here reads it.
const prepared = {} as Prepared;

const answer: Answer = {
  slot: undefined,
  attempts: [],
  result: {
    kind: 'chat',
    id: 'a',
    content: 'hi',
    finish_reason: 'stop',
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
    model: 'm',
  },
  usage: undefined,
  costMicros: 0,
  structured: undefined,
};

/** A stream's progress whose end the test decides. */
function streaming(): { progress: Progress; end: (e: StreamEnd) => void } {
  let end!: (e: StreamEnd) => void;
  const ended = new Promise<StreamEnd>((resolve) => {
    end = resolve;
  });
  // biome-ignore lint/correctness/useYield: settle never reads a stream's events, only its end.
  async function* events(): AsyncGenerator<StreamEvent, StreamEnd, void> {
    return ended;
  }
  const progress: Progress = {
    stream: true,
    prepared,
    notes: { sessionId: 's-1' },
    result: {
      kind: 'streaming',
      prepared,
      notes: {},
      slot: undefined,
      attempts: [],
      events: events(),
      ended,
    },
  };
  return { progress, end };
}

describe('settleEnd', () => {
  it('settles a request that opened no exchange at once, from its owner’s facts', () => {
    const settled: Finished[] = [];
    const error = new GatewayError('invalid_api_key', 'no key');
    settleEnd((f) => settled.push(f), ending({ httpStatus: 401, error }), performance.now(), undefined);
    expect(settled).toHaveLength(1);
    const f = settled[0]!;
    expect(f).toMatchObject({ id: 'req-1', httpStatus: 401, error, stream: false, aborted: false });
    expect(f.notes).toEqual({});
    expect(f.result).toBeUndefined();
    expect(f.prepared).toBeUndefined();
    expect(f.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('settles a finished exchange with what the pipeline established', () => {
    const settled: Finished[] = [];
    const result = { kind: 'answered', prepared, notes: {}, answer } as const;
    const progress: Progress = { stream: false, prepared, notes: { cache: 'miss' }, result };
    settleEnd((f) => settled.push(f), ending(), performance.now(), progress);
    expect(settled).toHaveLength(1);
    expect(settled[0]).toMatchObject({ prepared, notes: { cache: 'miss' }, result, stream: false });
  });

  it('settles a stream only once it has ended, with its end folded in', async () => {
    const settled: Finished[] = [];
    const { progress, end } = streaming();
    settleEnd((f) => settled.push(f), ending({ aborted: true }), performance.now(), progress);
    expect(settled).toHaveLength(0);
    end({ ok: true, answer });
    await Promise.resolve();
    expect(settled).toHaveLength(1);
    expect(settled[0]).toMatchObject({
      aborted: true,
      stream: true,
      notes: { sessionId: 's-1' },
      result: { kind: 'answered', prepared, answer },
    });
  });

  it('settles a stream that broke as failed', async () => {
    const settled: Finished[] = [];
    const { progress, end } = streaming();
    settleEnd((f) => settled.push(f), ending(), performance.now(), progress);
    const failure = {
      slot: undefined,
      attempts: [],
      code: 'UPSTREAM_ERROR',
      message: 'broke',
      providerMessage: 'broke',
      httpStatus: 502,
      upstreamStatus: undefined,
      usage: undefined,
      costMicros: 0,
      aborted: false,
    };
    end({ ok: false, failure });
    await Promise.resolve();
    expect(settled[0]?.result).toEqual({ kind: 'failed', prepared, notes: {}, failure });
  });
});
