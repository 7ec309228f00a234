import { describe, expect, it } from 'vitest';
import type { GuardrailRule } from '#contract';
import { localEdit } from '#gateway/guardrails/check';
import { compileRules } from '#gateway/guardrails/detect/index';
import { newNote } from '#gateway/guardrails/note';
import type { ResolvedRules } from '#gateway/guardrails/resolve';
import { guardStream } from '#gateway/guardrails/stream';
import { editResult } from '#gateway/guardrails/texts';
import type { ChatResult, StreamEvent } from '#gateway/providers/types';

/**
 * The pipeline's stream wrapper against the whole-answer check: every answer below, split into two
 * chunks at every position (content and tool-call arguments alike), streams out exactly what the
 * non-streamed answer is redacted to, with the same findings; a block ends it wherever the split.
 */

const rule = (
  name: string,
  type: 'card' | 'email' | 'secret',
  mode: GuardrailRule['mode'],
): GuardrailRule => ({
  name: `g/${name}`,
  detector: { type },
  mode,
  direction: 'output',
  enforced: false,
});
const RULES = [
  rule('cards', 'card', 'redact'),
  rule('mail', 'email', 'redact'),
  rule('keys', 'secret', 'monitor'),
];
const resolved: ResolvedRules = {
  compiled: compileRules(RULES),
  modes: new Map(RULES.map((r) => [r.name, r.mode])),
  input: false,
  output: true,
  webhooks: [],
};

const ANSWERS = [
  'Write to jane.doe@example.com or call.',
  'Card 4111 1111 1111 1111, expiry 12/29; mail ops@example.org.',
  'Nothing to see here, just text with 1234 5678 numbers.',
  'a@b.co',
];

async function* events(list: StreamEvent[]): AsyncGenerator<StreamEvent> {
  for (const e of list) yield e;
}

async function run(list: StreamEvent[]): Promise<{ content: string; args: string; rules: string[] }> {
  const note = newNote();
  const it = events(list);
  const first = await it.next();
  const out = guardStream(resolved, note, () => undefined, { first: first.value as StreamEvent, rest: it });
  let content = '';
  let args = '';
  const take = (e: StreamEvent) => {
    if (e.type !== 'delta') return;
    content += e.content ?? '';
    for (const t of e.tool_calls ?? []) args += t.arguments ?? '';
  };
  take(out.first);
  for (;;) {
    const n = await out.rest.next();
    if (n.done) break;
    take(n.value);
  }
  return { content, args, rules: note.findings.map((f) => f.rule).sort() };
}

function whole(text: string): { text: string; rules: string[] } {
  const note = newNote();
  const answer: ChatResult = {
    kind: 'chat',
    id: 'x',
    content: text,
    finish_reason: 'stop',
    usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
    model: 'm',
  };
  const r = editResult(
    answer,
    localEdit(resolved, 'output', note, () => undefined),
  ) as ChatResult;
  return { text: r.content ?? '', rules: note.findings.map((f) => f.rule).sort() };
}

describe('stream wrapper = whole-answer check, for every split', () => {
  it.each(ANSWERS)('%s', async (text) => {
    const expected = whole(text);
    let splits = 0;
    for (let at = 0; at <= text.length; at++) {
      const a = text.slice(0, at);
      const b = text.slice(at);
      const got = await run([
        { type: 'delta', content: a },
        { type: 'delta', content: b },
        { type: 'finish', finish_reason: 'stop' },
      ]);
      expect({ text: got.content, rules: got.rules }, `split at ${at}`).toEqual(expected);
      const tool = await run([
        { type: 'delta', tool_calls: [{ index: 0, id: 'c1', name: 'f', arguments: a }] },
        { type: 'delta', tool_calls: [{ index: 0, arguments: b }] },
      ]);
      expect({ text: tool.args, rules: tool.rules }, `tool split at ${at}`).toEqual(expected);
      splits++;
    }
    expect(splits).toBe(text.length + 1);
  });

  it('a block ends the stream wherever the value is split, and nothing of it went out', async () => {
    const blocking: ResolvedRules = { ...resolved, modes: new Map([['g/cards', 'block']]) };
    const text = 'pay 4111 1111 1111 1111 now';
    for (let at = 0; at <= text.length; at++) {
      const it = events([
        { type: 'delta', content: text.slice(0, at) },
        { type: 'delta', content: text.slice(at) },
        { type: 'finish', finish_reason: 'stop' },
      ]);
      const first = await it.next();
      const out = guardStream(blocking, newNote(), () => undefined, {
        first: first.value as StreamEvent,
        rest: it,
      });
      let sent = out.first.type === 'delta' ? (out.first.content ?? '') : '';
      const err = await (async () => {
        for (;;) {
          const n = await out.rest.next();
          if (n.done) return undefined;
          if (n.value.type === 'delta') sent += n.value.content ?? '';
        }
      })().catch((e: unknown) => e);
      expect((err as { code?: string } | undefined)?.code, `split at ${at}`).toBe('guardrail_blocked');
      expect(sent).not.toContain('1111');
    }
  });
});
