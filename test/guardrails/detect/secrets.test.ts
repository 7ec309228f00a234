import { describe, expect, it } from 'vitest';
import { GITLEAKS_RULES } from '#gateway/guardrails/detect/gitleaks-rules';
import { compileRules, redact } from '#gateway/guardrails/detect/index';
import { rule } from './rules.ts';
import { randomString, SECRET_SAMPLES } from './samples.ts';

const rules = compileRules([rule('secrets', { type: 'secret' })]);

describe('secret detector (gitleaks rules on re2js, plus JWT and PEM matchers)', () => {
  it('vendors a maintained rule set with the high-signal vendors', () => {
    const ids = GITLEAKS_RULES.map((r) => r.id);
    expect(ids.length).toBeGreaterThan(150);
    for (const id of [
      'aws-access-token',
      'github-pat',
      'gitlab-pat',
      'slack-bot-token',
      'stripe-access-token',
      'openai-api-key',
      'anthropic-api-key',
      'gcp-api-key',
    ])
      expect(ids).toContain(id);
  });

  for (const [name, secret] of Object.entries(SECRET_SAMPLES)) {
    it(`finds and masks a ${name} secret in prose, code and JSON`, () => {
      for (const text of [
        `Here is my key ${secret} please keep it safe.`,
        `const token = "${secret}";\n`,
        JSON.stringify({ auth: secret, user: 'x' }),
      ]) {
        const findings = rules.scan(text, 'input');
        expect(findings.length, `${name} in ${text}`).toBeGreaterThan(0);
        const masked = redact(text, findings);
        expect(masked).toContain('[SECRET]');
        // No 12-character run of the secret survives.
        for (let i = 0; i + 12 <= secret.length; i += 12)
          expect(masked).not.toContain(secret.slice(i, i + 12));
        for (const f of findings) expect(f.hash).toMatch(/^[0-9a-f]{16}$/);
      }
    });
  }

  it('rejects look-alikes: wrong lengths, low entropy, placeholders, JWT shapes that do not decode', () => {
    const negatives = [
      'ghp_short',
      `AKIA${'A'.repeat(16)}`,
      'sk_live_xxxxxxxxxxxxxxxxxxxxxxxx',
      `AIza${'a'.repeat(35)}`,
      'eyJhbGciOiJIUzI1NiJ9notbase64.eyJzdWIiOiIxIn0.sig',
      `eyJ${randomString(40, 30, 'abcdef')}.ey${randomString(41, 30, 'abcdef')}.${randomString(42, 20, 'abc')}`,
      '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----',
      'export AWS_ACCESS_KEY_ID=$AWS_ACCESS_KEY_ID',
    ];
    for (const text of negatives) expect(rules.scan(text, 'input'), text).toEqual([]);
  });

  it('masks a PEM private key from BEGIN to END, and one with no END to the end of the text', () => {
    const key = SECRET_SAMPLES.privateKey!;
    expect(redact(`a\n${key}\nb`, rules.scan(`a\n${key}\nb`, 'input'))).toBe('a\n[SECRET]\nb');
    const cut = key.slice(0, 300);
    expect(redact(`a ${cut}`, rules.scan(`a ${cut}`, 'input'))).toBe('a [SECRET]');
  });
});
