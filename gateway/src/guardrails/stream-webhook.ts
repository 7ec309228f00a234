import type { StreamEvent } from '../providers/types.ts';
import { type CallWebhook, type OnFinding, webhookPass } from './check.ts';
import type { GuardrailNote } from './note.ts';
import type { ResolvedRules } from './resolve.ts';
import type { GuardedStream } from './stream.ts';
import type { WebhookMetadata } from './webhook.ts';

type Delta = Extract<StreamEvent, { type: 'delta' }>;
type Call = { id?: string; name?: string; arguments: string };

/**
 * A streamed answer under a webhook rule that watches answers: an external check needs the whole
 * text to judge it, and text already sent cannot be taken back, so the answer's text is held until
 * the stream ends, checked (redacted, or ended with `guardrail_blocked`), and sent as one delta
 * before the finish. The stream's other events (usage) pass as they come. This is the one case
 * where guardrails wait for a whole answer; local rules never do.
 */
export function holdForWebhooks(
  rules: ResolvedRules,
  note: GuardrailNote,
  on: OnFinding,
  call: CallWebhook,
  metadata: WebhookMetadata,
  opened: GuardedStream,
  settled: () => void,
): GuardedStream {
  let content = '';
  const calls = new Map<number, Call>();
  const hold = (ev: Delta): void => {
    if (ev.content) content += ev.content;
    for (const t of ev.tool_calls ?? []) {
      const c = calls.get(t.index) ?? { arguments: '' };
      if (t.id) c.id = t.id;
      if (t.name) c.name = (c.name ?? '') + t.name;
      if (t.arguments) c.arguments += t.arguments;
      calls.set(t.index, c);
    }
  };
  /** The held text, checked: one delta (or none). */
  const release = async (): Promise<Delta | undefined> => {
    const indexes = [...calls.keys()].sort((a, b) => a - b);
    const walk = (edit: (t: string) => string) => ({
      content: edit(content),
      args: indexes.map((i) => edit(calls.get(i)?.arguments ?? '')),
    });
    let checked: ReturnType<typeof walk>;
    try {
      checked = await webhookPass(rules, 'output', walk, call, metadata, note, on);
    } finally {
      settled();
    }
    const toolCalls = indexes.map((index, k) => {
      const c = calls.get(index) as Call;
      return {
        index,
        ...(c.id ? { id: c.id } : {}),
        ...(c.name ? { name: c.name } : {}),
        arguments: checked.args[k] ?? '',
      };
    });
    content = '';
    calls.clear();
    if (!checked.content && toolCalls.length === 0) return undefined;
    return {
      type: 'delta',
      ...(checked.content ? { content: checked.content } : {}),
      ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
    };
  };

  const queue: StreamEvent[] = [];
  if (opened.first.type === 'delta') hold(opened.first);
  const first: StreamEvent = opened.first.type === 'delta' ? { type: 'delta', content: '' } : opened.first;
  let done = false;
  const rest: AsyncIterator<StreamEvent> = {
    async next() {
      for (;;) {
        const queued = queue.shift();
        if (queued) return { done: false, value: queued };
        if (done) return { done: true, value: undefined };
        const n = await opened.rest.next();
        try {
          if (n.done) {
            done = true;
            const last = await release();
            if (last) queue.push(last);
          } else if (n.value.type === 'delta') hold(n.value);
          else if (n.value.type === 'finish') {
            const last = await release();
            if (last) queue.push(last);
            queue.push(n.value);
          } else queue.push(n.value);
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
