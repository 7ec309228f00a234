import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileRules, type Finding, redact, StreamScanner } from '#gateway/guardrails/detect/index';
import { rule } from './rules.ts';
import { SECRET_SAMPLES } from './samples.ts';

const rules = compileRules([
  rule('cards', { type: 'card' }),
  rule('mails', { type: 'email' }),
  rule('words', { type: 'denyList', words: ['project falcon', 'falcon', 'secretword'] }),
  rule('tickets', { type: 'pattern', label: 'TICKET', pattern: 'TCK-[0-9]{4,8}' }),
  rule('watch', { type: 'pattern', label: 'WATCH', pattern: '(?i)zz[a-z]{2}' }, 'monitor'),
]);

const TEXTS = [
  'Pay with 4111 1111 1111 1111 or 5500-0000-0000-0004, mail bob.smith+x@example.co.uk today.',
  'Card:4111111111111111,4111111111111112;TCK-123456 project falcon FALCON falconry secretword.',
  '😀 a@b.io😀 4111111111111111😀 zzab zzAB, end with a@example.com',
  'first.last@sub.domain.example.org\n3782 822463 10005 TCK-1234TCK-5678 x',
  'no findings here at all, just words and 12345 numbers and @ signs @ and dots.',
  `key ${SECRET_SAMPLES.github} and ${SECRET_SAMPLES.stripe}; jwt ${SECRET_SAMPLES.jwt}. ok`,
  `pem:\n${SECRET_SAMPLES.privateKey}\nafter ${SECRET_SAMPLES.slackBot} x@y.org`,
  `unterminated ${SECRET_SAMPLES.privateKey!.slice(0, 200)}`,
];

/** `batch: 1` steps on every chunk (the hardest case); the default batches like production. */
function streamed(
  text: string,
  cuts: number[],
  batch: number | undefined = 1,
): { out: string; findings: Finding[] } {
  const s = new StreamScanner(rules, 'output', batch === undefined ? {} : { batch });
  let out = '';
  const findings: Finding[] = [];
  let at = 0;
  for (const cut of [...cuts, text.length]) {
    const step = s.push(text.slice(at, cut));
    out += step.emit;
    findings.push(...step.findings);
    at = cut;
  }
  const last = s.end();
  out += last.emit;
  findings.push(...last.findings);
  return { out, findings };
}

const sorted = (fs: Finding[]): Finding[] =>
  [...fs].sort((a, b) => a.start - b.start || a.end - b.end || a.rule.localeCompare(b.rule));
const expected = (text: string) => {
  const findings = rules.scan(text, 'output');
  return {
    out: redact(
      text,
      findings.filter((f) => f.mode === 'redact'),
    ),
    findings,
  };
};

describe('StreamScanner', () => {
  it('emits what scan + redact give, the text split at every position', () => {
    for (const text of TEXTS) {
      const want = expected(text);
      for (let cut = 0; cut <= text.length; cut++) {
        const got = streamed(text, [cut]);
        expect(got.out, `cut at ${cut}`).toBe(want.out);
        expect(sorted(got.findings)).toEqual(sorted(want.findings));
      }
    }
  });

  it('emits what scan + redact give for random multi-splits and one character at a time', () => {
    for (const text of TEXTS) {
      const want = expected(text);
      expect(
        streamed(
          text,
          [...text].map((_, i) => i),
        ).out,
      ).toBe(want.out);
      fc.assert(
        fc.property(fc.uniqueArray(fc.integer({ min: 0, max: text.length }), { maxLength: 12 }), (cuts) => {
          const got = streamed(
            text,
            cuts.sort((a, b) => a - b),
          );
          expect(got.out).toBe(want.out);
          expect(sorted(got.findings)).toEqual(sorted(want.findings));
        }),
        { numRuns: 200 },
      );
    }
  });

  it('emits early: text older than the hold-back window goes out before the stream ends', () => {
    const s = new StreamScanner(rules, 'output');
    const first = s.push(`${'plain words '.repeat(100)}`);
    // Default batching: a large chunk steps at once.
    expect(first.emit.length).toBeGreaterThanOrEqual(1200 - rules.holdBack - 1);
    console.log(`holdBack for cards+email+deny+pattern: ${rules.holdBack} chars`);
  });

  it('never emits half of a surrogate pair', () => {
    const s = new StreamScanner(rules, 'output', { batch: 1 });
    const emits = ['x'.repeat(500), '😀', '😀'.repeat(300)].map((c) => s.push(c).emit);
    emits.push(s.end().emit);
    for (const e of emits) expect(/[\ud800-\udbff]$/.test(e)).toBe(false);
  });
});
