import { describe, expect, it } from 'vitest';
import { planFold, SUMMARY_PREFIX, withMemory } from '#gateway/sessions/compose';
import { summaryRequest, testModeSummary } from '#gateway/sessions/summarize';
import type { SessionData, Turn } from '#gateway/sessions/types';

const t = (role: 'user' | 'assistant', tokens: number, content = `${role} ${tokens}`): Turn => ({
  message: { role, content },
  tokens,
  at: 0,
});
/** n exchanges of (user, assistant), each turn `tokens` tokens. */
const exchanges = (n: number, tokens = 10): Turn[] =>
  Array.from({ length: n }, (_, i) => [t('user', tokens, `q${i}`), t('assistant', tokens, `a${i}`)]).flat();

describe('planFold', () => {
  it('keeps the first exchange and about a quarter of the threshold of latest turns, folding the middle', () => {
    // 10 exchanges of 20 tokens; threshold 200 → keep ≤ 50 tokens at the end (the last exchange: 40).
    expect(planFold(exchanges(10, 20), 200)).toEqual({ start: 2, end: 18 });
    // 10-token turns: five fit in 50, the kept part starts at the question of the 8th exchange.
    expect(planFold(exchanges(10, 10), 200)).toEqual({ start: 2, end: 14 });
  });

  it('always keeps at least the last exchange, and never splits one', () => {
    // Turns larger than the budget: the last two are kept anyway.
    expect(planFold(exchanges(5, 500), 200)).toEqual({ start: 2, end: 8 });
    // A trailing lone question (tool round trips, streamed partials) stays with its exchange.
    const turns = [...exchanges(4), t('user', 10, 'q4'), t('assistant', 10, 'a4'), t('assistant', 10, 'a4b')];
    const f = planFold(turns, 40)!;
    expect(turns[f.end]!.message.role).toBe('user');
  });

  it('folds nothing without an answered first exchange or with fewer than two turns in the middle', () => {
    expect(planFold([t('user', 900)], 200)).toBeUndefined();
    expect(planFold(exchanges(2, 200), 200)).toBeUndefined();
  });
});

describe('withMemory', () => {
  const session = (summary: string, turns: Turn[]): SessionData => ({
    id: 'x',
    workflow: 'w',
    createdAt: 0,
    summary,
    summaryVersion: summary ? 1 : 0,
    summaryTokens: 0,
    foldedTurns: 0,
    turns,
  });

  it('puts instructions first, then the summary, the kept turns and the new messages', () => {
    const out = withMemory(
      [
        { role: 'system', content: 'workflow instructions' },
        { role: 'developer', content: 'client rules' },
        { role: 'user', content: 'new question' },
      ],
      session('what happened', exchanges(1)),
    );
    expect(out).toEqual([
      { role: 'system', content: 'workflow instructions' },
      { role: 'developer', content: 'client rules' },
      { role: 'system', content: `${SUMMARY_PREFIX}what happened` },
      { role: 'user', content: 'q0' },
      { role: 'assistant', content: 'a0' },
      { role: 'user', content: 'new question' },
    ]);
  });

  it('adds no summary message before the first summarisation', () => {
    expect(withMemory([{ role: 'user', content: 'hi' }], session('', []))).toEqual([
      { role: 'user', content: 'hi' },
    ]);
  });
});

describe('summaries', () => {
  it('the summary call carries the earlier summary and the folded turns, each clipped', () => {
    const req = summaryRequest('earlier', [t('user', 1, 'x'.repeat(5000)), t('assistant', 1, 'ok')], 2000);
    expect(req.messages[0]!.role).toBe('system');
    const text = req.messages[1]!.content as string;
    expect(text.startsWith('Summary so far:\nearlier\n\nNew turns:\nuser: xxx')).toBe(true);
    expect(text.length).toBeLessThan(4200);
    expect(text.endsWith('\nassistant: ok')).toBe(true);
    expect(req.max_tokens).toBe(1000);
  });

  it('test mode is deterministic and bounded to about half the threshold, newest lines kept', () => {
    const folded = exchanges(40);
    const a = testModeSummary('', folded, 200);
    expect(testModeSummary('', folded, 200)).toBe(a);
    expect(a.length).toBeLessThanOrEqual(400);
    expect(a.split('\n').at(-1)).toBe('assistant: a39');
    expect(testModeSummary('older line', [t('user', 1, 'new')], 2000)).toBe('older line\nuser: new');
  });
});
