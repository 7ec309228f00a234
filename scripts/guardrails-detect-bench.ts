/**
 * Micro-benchmark of the guardrail detection engine (gateway/src/guardrails/detect), no network:
 * CPU per scan of ~1 KB prompts with the redact set (cards, phones, e-mail, secrets), per
 * detector, and per streamed answer. A figure to read beside the gateway's CPU per request in
 * docs/benchmarks.md, not a test.
 *   node scripts/guardrails-detect-bench.ts [--ms 1500]
 */
import { parseArgs } from 'node:util';
import { guardrailRule } from '../contract/index.ts';
import { compileRules, redact, StreamScanner } from '../gateway/src/guardrails/detect/index.ts';

const { values } = parseArgs({ options: { ms: { type: 'string', default: '1500' } } });
const BUDGET_MS = Number(values.ms);

const rule = (name: string, detector: unknown) => guardrailRule.parse({ name, detector, mode: 'redact' });
const REDACT_SET = [
  rule('cards', { type: 'card' }),
  rule('phones', { type: 'phone' }),
  rule('emails', { type: 'email' }),
  rule('secrets', { type: 'secret' }),
];

const PROSE =
  'Summarise the following meeting notes for the team. We agreed to ship version 2.4 of the billing ' +
  'service on 14 March, after the load tests on the staging cluster pass. Ana will update the API docs ' +
  'and the onboarding guide; Tom owns the migration script and the rollback plan. Open questions: do we ' +
  'keep the legacy token endpoint for another quarter, and who reviews the access policy for the new ' +
  'auth flow? The customer reported 3 failed payments last week, all retried successfully. Next steps: ' +
  'write the release notes, tag the build, announce it in the channel, and schedule the retro for ' +
  'Friday at 10:30. Keep the answer under 200 words and use bullet points where it helps readability. ';
const PLAIN = PROSE.repeat(2).slice(0, 1024);
const WITH_PII = `${PLAIN.slice(0, 850)} Call me at (415) 555-2671 or mail ana.lopez@example.com; card 4111 1111 1111 1111; key ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8.`;

function measure(label: string, fn: () => void): number {
  for (let i = 0; i < 200; i++) fn();
  let n = 0;
  const t0 = process.cpuUsage();
  const w0 = performance.now();
  while (performance.now() - w0 < BUDGET_MS) {
    for (let i = 0; i < 50; i++) fn();
    n += 50;
  }
  const cpu = process.cpuUsage(t0);
  const us = (cpu.user + cpu.system) / n;
  process.stdout.write(`${label.padEnd(58)} ${us.toFixed(1).padStart(8)} µs CPU/op  (${n} ops)\n`);
  return us;
}

const heap0 = process.memoryUsage().heapUsed;
let t = performance.now();
const rules = compileRules(REDACT_SET);
rules.scan(WITH_PII, 'input');
process.stdout.write(
  `compile + first scan: ${(performance.now() - t).toFixed(1)} ms, heap +${((process.memoryUsage().heapUsed - heap0) / 1e6).toFixed(1)} MB, holdBack ${rules.holdBack}\n`,
);

measure(`redact set, ${PLAIN.length} chars of prose, scan + redact`, () =>
  redact(PLAIN, rules.scan(PLAIN, 'input')),
);
measure(`redact set, ${WITH_PII.length} chars with 4 findings, scan + redact`, () =>
  redact(WITH_PII, rules.scan(WITH_PII, 'input')),
);
for (const r of REDACT_SET) {
  const one = compileRules([r]);
  measure(`  ${r.detector.type} alone, prose`, () => one.scan(PLAIN, 'input'));
}
const chunks = PLAIN.match(/[\s\S]{1,12}/g) ?? [];
measure(`stream: the prose in ${chunks.length} chunks of 12 chars`, () => {
  const s = new StreamScanner(rules, 'output');
  for (const c of chunks) s.push(c);
  s.end();
});
t = performance.now();
const big = compileRules([
  ...REDACT_SET,
  rule('ibans', { type: 'iban' }),
  rule('ids', { type: 'nationalId', kinds: ['us-ssn', 'uk-nino', 'de-steuer-id', 'fr-nir', 'in-aadhaar'] }),
  rule('inj', { type: 'promptInjection' }),
  rule('deny', { type: 'denyList', words: Array.from({ length: 10_000 }, (_, i) => `word${i}`) }),
]);
process.stdout.write(
  `compile every detector + a 10k-word deny list: ${(performance.now() - t).toFixed(1)} ms\n`,
);
measure('every detector + 10k deny list, prose, scan + redact', () =>
  redact(PLAIN, big.scan(PLAIN, 'input')),
);
