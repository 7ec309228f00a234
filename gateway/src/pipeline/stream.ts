import { compatErrorBody } from '../errors/index.ts';
import type { StreamEvent, Usage } from '../providers/types.ts';
import { attemptFailure } from '../routing/execute.ts';
import type { OpenedStream } from '../routing/stream.ts';
import { checkStructured } from '../structured/validate.ts';
import { UpstreamError } from '../upstream/errors.ts';
import { describeStreamEnd } from './describe.ts';
import type { Exchange } from './exchange.ts';
import type { StreamEnd } from './outcome.ts';
import type { Prepared } from './prepare.ts';
import type { PipelineStages } from './stages.ts';

/**
 * Follows an opened stream for the encoder: yields its events, notes the time to first content,
 * collects usage, checks structured output at the end, and settles the slot's spend reservation.
 * A failure after the first event ends the stream with a StreamEnd the encoder must report
 * in-stream (never a silent [DONE]); it is never retried, because the client already has bytes.
 */
export async function* followStream(
  stages: PipelineStages,
  ex: Exchange,
  p: Prepared,
  opened: Extract<OpenedStream, { ok: true }>,
): AsyncGenerator<StreamEvent, StreamEnd, void> {
  const { slot } = opened;
  // A stream that outgrows its spend reservation extends it, or is stopped (DESIGN.md "Money and limits").
  const budget = p.plan.guard?.stream?.(slot);
  let outputChars = 0;
  let usage: Usage | undefined;
  let text = '';
  let sawContent = false;
  let end: StreamEnd = { ok: true, usage: undefined };
  const take = (ev: StreamEvent): boolean => {
    if (ev.type === 'usage') {
      usage = ev.usage;
      return false;
    }
    if (ev.type === 'delta' && ev.content) {
      text += ev.content;
      outputChars += ev.content.length;
    }
    if (!sawContent) {
      sawContent = true;
      ex.record.ttftMs = performance.now() - ex.startedAt;
    }
    return true;
  };
  try {
    if (take(opened.first)) yield opened.first;
    for (;;) {
      const next = await opened.rest.next();
      if (next.done) break;
      if (take(next.value)) yield next.value;
      // Output is counted at 4 characters a token: cheap, and the settle uses the real usage.
      if (budget && outputChars / 4 > budget.outputTokens) {
        const more = await budget.extend();
        if (!more.ok) {
          const refusal = { code: more.code, type: 'budget_exceeded' };
          end = { ok: false, message: more.message, code: more.code, aborted: false, refusal };
          await opened.rest.return?.().catch(() => undefined);
          break;
        }
        budget.outputTokens = more.outputTokens;
      }
    }
    if (end.ok && (p.plan.structured || p.plan.json)) {
      const check = checkStructured(text, p.plan.structured?.schema);
      if (!check.ok)
        end = { ok: false, message: check.message, code: 'UPSTREAM_BAD_RESPONSE', aborted: false };
    }
  } catch (err) {
    const e = attemptFailure(err);
    end =
      e instanceof UpstreamError
        ? { ok: false, message: e.providerMessage || e.message, code: e.code, aborted: ex.signal.aborted }
        : {
            ok: false,
            message: e.message,
            code: e.code,
            aborted: false,
            refusal: { code: e.code, type: compatErrorBody(e).error.type },
          };
  }
  const attempt = opened.attempts[opened.attempts.length - 1]!;
  attempt.duration_ms = Math.round(performance.now() - opened.started);
  if (!end.ok) Object.assign(attempt, { status: 'error', reason: { message: end.message, code: end.code } });
  else end = { ok: true, usage };
  describeStreamEnd(ex.record, p, slot, end, usage, text);
  // A stream that failed mid-way still consumed tokens: commit what was reported either way.
  p.plan.guard?.commit(slot, usage);
  const durable = stages.completed(
    ex,
    p,
    end.ok ? { ok: true, streamedText: text, usage } : { ok: false, usage },
  );
  // The stream's last events go out once what must be durable is (a session turn).
  if (durable) await durable;
  return end;
}
