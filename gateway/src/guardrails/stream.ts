import type { StreamEvent } from '../providers/types.ts';
import { applyFindings, type OnFinding } from './check.ts';
import { type Finding, StreamScanner } from './detect/index.ts';
import type { GuardrailNote } from './note.ts';
import type { ResolvedRules } from './resolve.ts';

export interface GuardedStream {
  first: StreamEvent;
  rest: AsyncIterator<StreamEvent>;
}

type Delta = Extract<StreamEvent, { type: 'delta' }>;

/**
 * A streamed answer checked on the fly, one scanner per text channel (the content, and the
 * arguments of each tool call): each holds back only the few characters a match could still be
 * growing into, so a value split across chunks is caught whole and the rest flows at once.
 * Redactions are made before the text leaves; a block ends the stream with `guardrail_blocked`,
 * which the surface's encoder reports as its own error event (what was already sent was clean).
 */
export function guardStream(
  rules: ResolvedRules,
  note: GuardrailNote,
  on: OnFinding,
  opened: GuardedStream,
): GuardedStream {
  const content = new StreamScanner(rules.compiled, 'output');
  const args = new Map<number, StreamScanner>();
  const record = (found: readonly Finding[], text: string): void => {
    // Throws on a block; monitor and redact findings are recorded (the scanner already masked).
    if (found.length) applyFindings(rules, 'output', note, on, text, found);
  };
  const flush = (): Delta | undefined => {
    const c = content.end();
    record(c.findings, c.emit);
    const calls: NonNullable<Delta['tool_calls']> = [];
    for (const [index, s] of args) {
      const a = s.end();
      record(a.findings, a.emit);
      if (a.emit) calls.push({ index, arguments: a.emit });
    }
    args.clear();
    if (!c.emit && calls.length === 0) return undefined;
    return {
      type: 'delta',
      ...(c.emit ? { content: c.emit } : {}),
      ...(calls.length ? { tool_calls: calls } : {}),
    };
  };
  const transform = (ev: StreamEvent): StreamEvent[] => {
    switch (ev.type) {
      case 'delta': {
        let text: string | undefined;
        if (ev.content) {
          const r = content.push(ev.content);
          record(r.findings, r.emit);
          text = r.emit;
        }
        const calls = ev.tool_calls?.map((t) => {
          if (!t.arguments) return t;
          let s = args.get(t.index);
          if (!s) {
            s = new StreamScanner(rules.compiled, 'output');
            args.set(t.index, s);
          }
          const r = s.push(t.arguments);
          record(r.findings, r.emit);
          return { ...t, arguments: r.emit };
        });
        const keptCalls = calls?.filter((t) => t.id || t.name || t.arguments);
        if (!text && !keptCalls?.length) return [];
        return [
          {
            type: 'delta',
            ...(text ? { content: text } : {}),
            ...(keptCalls?.length ? { tool_calls: keptCalls } : {}),
          },
        ];
      }
      case 'finish': {
        const last = flush();
        return last ? [last, ev] : [ev];
      }
      // The provider's own events would carry the unchecked text: the request went out canonical.
      case 'native':
        return [];
      default:
        return [ev];
    }
  };

  const queue: StreamEvent[] = [];
  let pending: unknown;
  try {
    queue.push(...transform(opened.first));
  } catch (err) {
    // A block in the very first chunk ends the stream at its first read, like any other.
    pending = err;
  }
  // The first event opens the stream: held-back text must not keep it waiting.
  const first: StreamEvent = queue.shift() ?? { type: 'delta', content: '' };
  let done = false;
  const rest: AsyncIterator<StreamEvent> = {
    async next() {
      if (pending !== undefined) {
        const err = pending;
        pending = undefined;
        done = true;
        await opened.rest.return?.().catch(() => undefined);
        throw err;
      }
      for (;;) {
        const queued = queue.shift();
        if (queued) return { done: false, value: queued };
        if (done) return { done: true, value: undefined };
        const n = await opened.rest.next();
        try {
          if (n.done) {
            done = true;
            const last = flush();
            if (last) queue.push(last);
          } else queue.push(...transform(n.value));
        } catch (err) {
          done = true;
          await opened.rest.return?.().catch(() => undefined);
          throw err;
        }
      }
    },
    async return() {
      done = true;
      await opened.rest.return?.().catch(() => undefined);
      return { done: true, value: undefined };
    },
  };
  return { first, rest };
}
