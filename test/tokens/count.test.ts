/**
 * Token estimates without a tokenizer table, against OpenAI's o200k_base counts (gpt-tokenizer,
 * loaded here as count_tokens loads it): how far the character estimate lands from the real count
 * on prose, code and CJK text, printed, and bounded where the estimate is relied on.
 */
import { describe, expect, it } from 'vitest';
import { countMessageTokens, countTextTokens, exactMessageTokens } from '#gateway/tokens/count';

const SAMPLES = {
  prose:
    'Spend caps are reserved before each upstream call and settled with the real usage afterwards, so any number of concurrent requests on any number of pods overshoots a cap by less than one request estimate.',
  code: 'export function add(a: number, b: number): number {\n  return a + b; // sum\n}\nconst xs = [1, 2, 3].map((x) => add(x, 10));',
  cjk: '请帮我查一下订单的状态，我上周五下的单，到现在还没有收到货。谢谢！',
};

describe('token estimates', () => {
  it('four ASCII characters a token, one token for every other UTF-16 unit', () => {
    expect(countTextTokens('')).toBe(0);
    expect(countTextTokens('abcd')).toBe(1);
    expect(countTextTokens('abcde')).toBe(2);
    expect(countTextTokens('订单')).toBe(2);
    expect(countTextTokens('ab订单')).toBe(3);
    // Per message: 3 of format, the role, the content; 3 to prime the reply.
    expect(countMessageTokens([{ role: 'user', content: 'abcdefgh' }])).toBe(3 + 3 + 1 + 2);
  });

  it('lands near the o200k count on prose and does not under-count CJK text', async () => {
    const rows: string[] = [];
    for (const [name, text] of Object.entries(SAMPLES)) {
      const messages = [{ role: 'user' as const, content: text }];
      const estimate = countMessageTokens(messages, 'openai');
      const exact = await exactMessageTokens(messages, 'openai');
      rows.push(`${name} ${estimate}/${exact} = ${(estimate / exact).toFixed(2)}`);
      if (name === 'prose') expect(estimate / exact).toBeGreaterThan(0.8);
      if (name === 'prose') expect(estimate / exact).toBeLessThan(1.4);
      if (name === 'cjk') expect(estimate).toBeGreaterThanOrEqual(exact);
      if (name === 'code') expect(estimate / exact).toBeGreaterThan(0.6);
    }
    console.log(`token estimate / o200k count: ${rows.join('; ')}`);
  });

  it('exact counts are for OpenAI-family providers; others get the estimate', async () => {
    const messages = [{ role: 'user' as const, content: SAMPLES.prose }];
    expect(await exactMessageTokens(messages, 'anthropic')).toBe(countMessageTokens(messages));
    expect(await exactMessageTokens(messages, 'azure-openai')).toBe(
      await exactMessageTokens(messages, 'openai'),
    );
  });
});
