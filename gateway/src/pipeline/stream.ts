import { answerCost } from '../domain/cost.ts';
import { compatErrorBody } from '../errors/index.ts';
import { resultEvents } from '../providers/replay.ts';
import type {
  ChatResult,
  CompletionResult,
  StopSequence,
  StreamEvent,
  ToolCall,
  Usage,
} from '../providers/types.ts';
import { attemptFailure } from '../routing/execute.ts';
import type { OpenedStream } from '../routing/stream.ts';
import { checkStructured } from '../structured/validate.ts';
import { UpstreamError } from '../upstream/errors.ts';
import type { Exchange } from './exchange.ts';
import type { RunEnd } from './feature.ts';
import type { Prepared } from './prepare.ts';
import type { Answer, Failure, StreamEnd } from './result.ts';
import type { Runs } from './runs.ts';

/** A stream's events, and its end once every feature has finished with it. */
export interface FollowedStream {
  events: AsyncGenerator<StreamEvent, StreamEnd, void>;
  ended: Promise<StreamEnd>;
}

/** What a stream said so far: its text, tool calls, finish reason and reported usage. */
class Tally {
  text = '';
  readonly #calls: { id: string; name: string; arguments: string }[] = [];
  finish = 'stop';
  stop: StopSequence = {};
  usage: Usage | undefined;
  ttftMs: number | undefined;

  /** Takes one event; false for events the client does not see (usage). */
  take(ev: StreamEvent, startedAt: number): boolean {
    if (ev.type === 'usage') {
      this.usage = ev.usage;
      return false;
    }
    // A provider's own event, for its dialect's encoder: what it says arrives as canonical events too.
    if (ev.type === 'native') return true;
    if (ev.type === 'finish') {
      this.finish = ev.finish_reason;
      if (ev.stop_sequence !== undefined) this.stop = { stop_sequence: ev.stop_sequence };
    } else {
      if (ev.content) this.text += ev.content;
      if (ev.tool_calls)
        for (const t of ev.tool_calls) {
          let c = this.#calls[t.index];
          if (!c) {
            c = { id: '', name: '', arguments: '' };
            this.#calls[t.index] = c;
          }
          if (t.id) c.id = t.id;
          if (t.name) c.name += t.name;
          if (t.arguments) c.arguments += t.arguments;
        }
    }
    this.ttftMs ??= performance.now() - startedAt;
    return true;
  }

  /** The stream as the answer it adds up to (what the cache keeps and a session remembers). */
  result(kind: 'chat' | 'completion', id: string, model: string): ChatResult | CompletionResult {
    const usage = this.usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
    if (kind === 'completion')
      return {
        kind: 'completion',
        id: `cmpl-${id}`,
        text: this.text,
        finish_reason: this.finish,
        usage,
        model,
      };
    const calls = this.#calls.filter(Boolean);
    const tool_calls: ToolCall[] = calls.map((c) => ({
      id: c.id,
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
    return {
      kind: 'chat',
      id: `chatcmpl-${id}`,
      content: this.text || (tool_calls.length ? null : ''),
      ...(tool_calls.length ? { tool_calls } : {}),
      finish_reason: this.finish,
      ...this.stop,
      usage,
      model,
    };
  }
}

const runEndOf = (end: StreamEnd): RunEnd =>
  end.ok ? { kind: 'answered', answer: end.answer } : { kind: 'failed', failure: end.failure };

/**
 * Follows an opened stream for the encoder: yields its events, notes the time to first content,
 * extends the spend reservation as the output grows, checks structured output at the end, and
 * finishes every feature run before its end is returned (a session turn is stored before the
 * client's last event). A failure after the first event is the stream's end, reported in-stream
 * by the encoder (never a silent [DONE]) and never retried: the client already has bytes.
 */
export function followStream(
  ex: Exchange,
  runs: Runs,
  p: Prepared,
  opened: Extract<OpenedStream, { ok: true }>,
): FollowedStream {
  let resolve!: (end: StreamEnd) => void;
  const ended = new Promise<StreamEnd>((r) => (resolve = r));
  return { events: follow(ex, runs, p, opened, resolve), ended };
}

async function* follow(
  ex: Exchange,
  runs: Runs,
  p: Prepared,
  opened: Extract<OpenedStream, { ok: true }>,
  resolve: (end: StreamEnd) => void,
): AsyncGenerator<StreamEvent, StreamEnd, void> {
  const { slot } = opened;
  const budget = p.plan.guard?.stream?.(slot);
  const tally = new Tally();
  let outputChars = 0;
  let failed: Pick<Failure, 'code' | 'message' | 'aborted' | 'refusal'> | undefined;
  let followed = false;
  let end!: StreamEnd;
  try {
    if (tally.take(opened.first, ex.startedAt)) yield opened.first;
    for (;;) {
      const next = await opened.rest.next();
      if (next.done) break;
      const ev = next.value;
      if (tally.take(ev, ex.startedAt)) yield ev;
      if (ev.type === 'delta' && ev.content) outputChars += ev.content.length;
      // Output is counted at 4 characters a token: cheap, and the settle uses the real usage.
      if (budget && outputChars / 4 > budget.outputTokens) {
        const more = await budget.extend();
        if (!more.ok) {
          failed = {
            code: more.code,
            message: more.message,
            aborted: false,
            refusal: { code: more.code, type: 'budget_exceeded' },
          };
          await opened.rest.return?.().catch(() => undefined);
          break;
        }
        budget.outputTokens = more.outputTokens;
      }
    }
    if (!failed && (p.plan.structured || p.plan.json)) {
      const check = checkStructured(tally.text, p.plan.structured?.schema);
      if (!check.ok) failed = { code: 'UPSTREAM_BAD_RESPONSE', message: check.message, aborted: false };
    }
    followed = true;
  } catch (err) {
    const e = attemptFailure(err);
    // The provider's failure, or the gateway's own (reported as such, never as upstream_error).
    failed =
      e instanceof UpstreamError
        ? { code: e.code, message: e.providerMessage || e.message, aborted: ex.signal.aborted }
        : {
            code: e.code,
            message: e.message,
            aborted: false,
            refusal: { code: e.code, type: compatErrorBody(e).error.type },
          };
    followed = true;
  } finally {
    // The consumer stopped reading (return()): the exchange still ends, as aborted by the client.
    if (!followed) {
      await opened.rest.return?.().catch(() => undefined);
      failed = { code: 'CLIENT_CLOSED', message: 'the client stopped reading the stream', aborted: true };
    }
    end = endOf(ex, p, opened, tally, failed);
    const durable = runs.finish(runEndOf(end));
    if (durable) await durable;
    resolve(end);
  }
  return end;
}

function endOf(
  ex: Exchange,
  p: Prepared,
  opened: Extract<OpenedStream, { ok: true }>,
  tally: Tally,
  failed: Pick<Failure, 'code' | 'message' | 'aborted' | 'refusal'> | undefined,
): StreamEnd {
  const { slot, attempts } = opened;
  const attempt = attempts[attempts.length - 1]!;
  attempt.duration_ms = Math.round(performance.now() - opened.started);
  // A stream that failed mid-way still consumed tokens: its cost is what was reported, else unknown.
  const cost = tally.usage ? answerCost(p.plan, slot, tally.usage) : p.plan.testMode ? 0 : null;
  if (failed) {
    Object.assign(attempt, { status: 'error', reason: { message: failed.message, code: failed.code } });
    opened.span.failed(failed);
    return {
      ok: false,
      failure: {
        ...failed,
        slot,
        attempts,
        providerMessage: failed.message,
        httpStatus: 502,
        upstreamStatus: undefined,
        usage: tally.usage,
        costMicros: cost,
        ttftMs: tally.ttftMs,
      },
    };
  }
  const kind = p.request.kind === 'completion' ? 'completion' : 'chat';
  const result = tally.result(kind, ex.id, slot.model);
  // Time to first chunk from the attempt's own start (ttftMs counts from the request's).
  const ttfc = tally.ttftMs === undefined ? undefined : ex.startedAt + tally.ttftMs - opened.started;
  opened.span.answered(result, tally.usage, ttfc);
  const answer: Answer = {
    slot,
    attempts,
    result,
    usage: tally.usage,
    costMicros: cost,
    structured: undefined,
    ttftMs: tally.ttftMs,
  };
  return { ok: true, answer };
}

/** Pieces a replayed answer is sent in: the chunk format of a live stream, without its wait. */
const PIECE = 64;
const pieces = (text: string): string[] => {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += PIECE) out.push(text.slice(i, i + PIECE));
  return out;
};

/** An answer given without a provider (a cache hit) as stream events, ending with its usage. */
export function replayStream(ex: Exchange, answer: Answer): FollowedStream {
  let resolve!: (end: StreamEnd) => void;
  const ended = new Promise<StreamEnd>((r) => (resolve = r));
  async function* replay(): AsyncGenerator<StreamEvent, StreamEnd, void> {
    const end: StreamEnd = { ok: true, answer };
    try {
      for await (const ev of resultEvents(answer.result, pieces)) {
        if (ev.type === 'usage') continue;
        answer.ttftMs ??= performance.now() - ex.startedAt;
        yield ev;
      }
    } finally {
      resolve(end);
    }
    return end;
  }
  return { events: replay(), ended };
}
