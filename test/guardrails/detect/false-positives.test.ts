import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileRules } from '#gateway/guardrails/detect/index';
import { rule } from './rules.ts';

/**
 * False positives on ordinary text: the project's own prose, code and JSON (none of which holds real
 * PII or secrets). Every finding is printed with its detector so a reader can judge it.
 */
const ROOT = join(import.meta.dirname, '../../..');
const SOURCES: Record<string, string> = {
  prose: ['README.md', 'docs/architecture.md']
    .map((p) => readFileSync(join(ROOT, p), 'utf8').slice(0, 12_000))
    .join('\n'),
  code: ['gateway/src/pipeline/run.ts', 'gateway/src/guardrails/detect/stream.ts']
    .map((p) => readFileSync(join(ROOT, p), 'utf8'))
    .join('\n'),
  // The kind of numbers business text is full of.
  numbers: [
    'Order 100234 shipped on 2024-03-15 at 14:32; invoice INV-2024-00017 totals $1,234.56 (VAT 19%).',
    'Tracking 1Z999AA10123456784, ZIP 94103, ref 4500012345, qty 12, SKU 8806094154126, ISBN 978-0-306-40615-7.',
    'Commit 9fceb02d0ae598e95dc970b74767f19372d61af8, UUID 123e4567-e89b-12d3-a456-426614174000, sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855.',
    'Build 1.24.3 (2026.8.31), port 8080, PID 31337, 3.14159, 1e-9, 0x7fffffff, 192.168.0.1, v2.10.0.',
    'Meeting Tuesday 10:30-11:45 in room 4.12; call extension 2301; our fax page 12 of 40; 1,000,000 users.',
    'Timestamps 1716239022 and 1716239022123; the year 1999; account ending 4242; 15 March 2024.',
    'base64: SGVsbG8sIFdvcmxkIQ== and aGVsbG8gd29ybGQgdGhpcyBpcyBhIHRlc3Q=; hex 48656c6c6f20576f726c64.',
  ].join('\n'),
  json: readFileSync(join(ROOT, 'package.json'), 'utf8') + readFileSync(join(ROOT, 'tsconfig.json'), 'utf8'),
};

const rules = compileRules([
  rule('card', { type: 'card' }),
  rule('iban', { type: 'iban' }),
  rule('phone', { type: 'phone', regions: ['US', 'GB', 'DE'] }),
  rule('email', { type: 'email' }),
  rule('national-id', {
    type: 'nationalId',
    kinds: ['us-ssn', 'uk-nino', 'de-steuer-id', 'fr-nir', 'in-aadhaar'],
  }),
  rule('secret', { type: 'secret' }),
  rule('injection', { type: 'promptInjection' }),
]);

describe('false positives on ordinary prose, code and JSON', () => {
  it('prints the count per detector; validated detectors report nothing', () => {
    let total = 0;
    const perRule = new Map<string, number>();
    for (const [kind, text] of Object.entries(SOURCES)) {
      const findings = rules.scan(text, 'input');
      total += text.length;
      for (const f of findings) {
        perRule.set(f.rule, (perRule.get(f.rule) ?? 0) + 1);
        console.log(`${kind}: ${f.rule} ${JSON.stringify(text.slice(f.start, f.end))}`);
      }
    }
    console.log(
      `false positives over ${total} characters of prose, code and JSON: ${JSON.stringify(Object.fromEntries(perRule))}`,
    );
    for (const r of ['card', 'iban', 'national-id', 'secret', 'injection'])
      expect(perRule.get(r) ?? 0, r).toBe(0);
    expect([...perRule.values()].reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(3);
  });
});
