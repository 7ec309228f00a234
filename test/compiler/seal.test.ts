import { describe, expect, it } from 'vitest';
import { parseSealKey, SealError, type Sealed, seal, sealed, unseal } from '#contract';

const KEY = Buffer.alloc(32, 1);
const OTHER = Buffer.alloc(32, 2);
const CONTEXT = 'provider:acme/openai';

/** Flips one bit of a base64 field. */
const flip = (b64: string, byte = 0): string => {
  const buf = Buffer.from(b64, 'base64');
  buf[byte] = (buf[byte] ?? 0) ^ 1;
  return buf.toString('base64');
};

describe('seal / unseal', () => {
  it.each([
    { title: 'an API key', plaintext: 'sk-live-0123456789' },
    { title: 'an empty string', plaintext: '' },
    { title: 'unicode', plaintext: 'schlüssel 🔑 ключ' },
    { title: 'a long value', plaintext: 'x'.repeat(10_000) },
  ])('round-trips $title', ({ plaintext }) => {
    const box = seal(KEY, CONTEXT, plaintext);
    expect(sealed.parse(box)).toEqual(box);
    expect(box.alg).toBe('A256GCM');
    expect(Buffer.from(box.iv, 'base64')).toHaveLength(12);
    expect(Buffer.from(box.tag, 'base64')).toHaveLength(16);
    expect(unseal(KEY, CONTEXT, box)).toBe(plaintext);
    if (plaintext) expect(JSON.stringify(box)).not.toContain(plaintext);
  });

  it('is deterministic: same key, context and plaintext give the same box', () => {
    expect(seal(KEY, CONTEXT, 'secret')).toEqual(seal(KEY, CONTEXT, 'secret'));
  });

  it.each([
    { title: 'another plaintext', change: () => seal(KEY, CONTEXT, 'secret2') },
    { title: 'another context', change: () => seal(KEY, 'provider:acme/anthropic', 'secret') },
    { title: 'another key', change: () => seal(OTHER, CONTEXT, 'secret') },
  ])('derives a different IV for $title', ({ change }) => {
    const base = seal(KEY, CONTEXT, 'secret');
    const other = change();
    expect(other.iv).not.toBe(base.iv);
    expect(other.data === base.data && other.tag === base.tag).toBe(false);
  });

  it('does not confuse context and plaintext boundaries', () => {
    expect(seal(KEY, 'ab', 'c').iv).not.toBe(seal(KEY, 'a', 'bc').iv);
  });

  const box = seal(KEY, CONTEXT, 'secret value');
  it.each<{ title: string; key: Buffer; context: string; box: Sealed }>([
    { title: 'a wrong key', key: OTHER, context: CONTEXT, box },
    { title: 'a wrong context', key: KEY, context: 'provider:acme/other', box },
    { title: 'tampered data', key: KEY, context: CONTEXT, box: { ...box, data: flip(box.data) } },
    { title: 'tampered tag', key: KEY, context: CONTEXT, box: { ...box, tag: flip(box.tag, 15) } },
    { title: 'tampered iv', key: KEY, context: CONTEXT, box: { ...box, iv: flip(box.iv, 11) } },
    {
      title: 'a truncated tag',
      key: KEY,
      context: CONTEXT,
      box: { ...box, tag: Buffer.alloc(4).toString('base64') },
    },
    {
      title: 'swapped data from another box',
      key: KEY,
      context: CONTEXT,
      box: { ...box, data: seal(KEY, CONTEXT, 'other value!').data },
    },
  ])('refuses $title with a SealError', ({ key, context, box: b }) => {
    expect(() => unseal(key, context, b)).toThrow(SealError);
    expect(() => unseal(key, context, b)).toThrow(`cannot unseal ${context}`);
  });

  it('SealError carries a code', () => {
    try {
      unseal(OTHER, CONTEXT, box);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(SealError);
      expect((err as SealError).code).toBe('SEAL_ERROR');
      expect((err as Error).message).not.toContain('secret value');
    }
  });
});

describe('parseSealKey', () => {
  const bytes = Buffer.from(Array.from({ length: 32 }, (_, i) => i * 7 + 3));

  it.each([
    { title: 'lowercase hex', material: bytes.toString('hex') },
    { title: 'uppercase hex', material: bytes.toString('hex').toUpperCase() },
    { title: 'base64', material: bytes.toString('base64') },
  ])('accepts $title', ({ material }) => {
    expect(parseSealKey(material)).toEqual(bytes);
  });

  it('keys parsed from hex and base64 seal alike', () => {
    const a = seal(parseSealKey(bytes.toString('hex')), CONTEXT, 'v');
    expect(unseal(parseSealKey(bytes.toString('base64')), CONTEXT, a)).toBe('v');
  });

  it.each([
    { title: 'empty', material: '' },
    { title: '16 bytes hex', material: Buffer.alloc(16, 1).toString('hex') },
    { title: '31 bytes base64', material: Buffer.alloc(31, 1).toString('base64') },
    { title: '33 bytes base64', material: Buffer.alloc(33, 1).toString('base64') },
    { title: '63 hex digits', material: 'a'.repeat(63) },
    { title: '65 hex digits', material: 'a'.repeat(65) },
    { title: '64 bytes hex (a sha512)', material: 'ab'.repeat(64) },
  ])('refuses $title', ({ material }) => {
    expect(() => parseSealKey(material)).toThrow(SealError);
    expect(() => parseSealKey(material)).toThrow('32 bytes');
  });
});
