import { describe, expect, it } from 'vitest';
import { boundaryOf, parseMultipart } from './multipart.ts';

describe('multipart parser', () => {
  it('reads the boundary, quoted or not', () => {
    expect(boundaryOf('multipart/form-data; boundary=abc123')).toBe('abc123');
    expect(boundaryOf('multipart/form-data; charset=utf-8; boundary="a b:c"')).toBe('a b:c');
    expect(boundaryOf('application/json')).toBeUndefined();
  });

  it('keeps binary data intact, even bytes that look like CRLF and dashes', () => {
    const boundary = '----sim-boundary';
    const binary = Buffer.from([
      0x00, 0x0d, 0x0a, 0x2d, 0x2d, 0xff, 0x0d, 0x0a, 0x0d, 0x0a, 0x2d, 0x2d, 0x2d, 0x2d, 0x73,
    ]);
    const body = Buffer.concat([
      Buffer.from(
        `preamble\r\n--${boundary}\r\nContent-Disposition: form-data; name="model"\r\n\r\nwhisper-1\r\n`,
      ),
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a \\"b\\".wav"\r\nContent-Type: audio/wav\r\n\r\n`,
      ),
      binary,
      Buffer.from(`\r\n--${boundary}--\r\nepilogue`),
    ]);
    const parts = parseMultipart(body, boundary);
    expect(parts).toHaveLength(2);
    expect(parts[0]).toMatchObject({ name: 'model' });
    expect(parts[0]!.data.toString()).toBe('whisper-1');
    expect(parts[1]).toMatchObject({ name: 'file', filename: 'a "b".wav', contentType: 'audio/wav' });
    expect(Buffer.compare(parts[1]!.data, binary)).toBe(0);
  });

  it('handles empty values and rejects unterminated bodies', () => {
    const ok = Buffer.from('--b\r\nContent-Disposition: form-data; name="x"\r\n\r\n\r\n--b--');
    expect(parseMultipart(ok, 'b')[0]!.data.length).toBe(0);
    expect(() =>
      parseMultipart(Buffer.from('--b\r\nContent-Disposition: form-data; name="x"\r\n\r\nabc'), 'b'),
    ).toThrow();
    expect(() => parseMultipart(Buffer.from('nothing here'), 'b')).toThrow();
  });

  it('round-trips what fetch FormData produces', async () => {
    const payload = new Uint8Array(4096).map((_, i) => (i * 31) % 256);
    const form = new FormData();
    form.append('file', new Blob([payload]), 'x.bin');
    form.append('language', 'de');
    const req = new Request('http://x/', { method: 'POST', body: form });
    const boundary = boundaryOf(req.headers.get('content-type') ?? '')!;
    const parts = parseMultipart(Buffer.from(await req.arrayBuffer()), boundary);
    expect(parts.map((p) => p.name)).toEqual(['file', 'language']);
    expect(Buffer.compare(parts[0]!.data, Buffer.from(payload))).toBe(0);
  });
});
