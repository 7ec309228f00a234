import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseSse, type SseEvent, SseParser } from '#gateway/upstream/sse';

function parseAll(chunks: (Uint8Array | string)[]): SseEvent[] {
  const p = new SseParser();
  const out: SseEvent[] = [];
  for (const c of chunks) p.push(c, out);
  p.end();
  return out;
}

function splitAt(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [...new Set(cuts.map((c) => c % (bytes.length + 1)))].sort((a, b) => a - b);
  const out: Uint8Array[] = [];
  let prev = 0;
  for (const p of points) {
    out.push(bytes.subarray(prev, p));
    prev = p;
  }
  out.push(bytes.subarray(prev));
  return out;
}

describe('SseParser', () => {
  it('parses data, event, id, comments and multi-line data', () => {
    const text =
      ': keep-alive comment\n' +
      'event: message_start\n' +
      'data: {"a":1}\n' +
      '\n' +
      'id: 7\n' +
      'data: line1\n' +
      'data:line2\n' +
      'data\n' +
      '\n' +
      'retry: 1000\n' +
      'data: [DONE]\n\n';
    expect(parseAll([text])).toEqual([
      { event: 'message_start', data: '{"a":1}', id: undefined },
      { event: undefined, data: 'line1\nline2\n', id: '7' },
      { event: undefined, data: '[DONE]', id: '7' },
    ]);
  });

  it('handles CRLF, CR and LF line endings, including CRLF split across chunks', () => {
    expect(parseAll(['data: a\r\n\r\ndata: b\r\rdata: c\n\n'])).toEqual([
      { event: undefined, data: 'a', id: undefined },
      { event: undefined, data: 'b', id: undefined },
      { event: undefined, data: 'c', id: undefined },
    ]);
    expect(parseAll(['data: a\r', '\n\r', '\ndata: b\r', '\r'])).toEqual([
      { event: undefined, data: 'a', id: undefined },
      { event: undefined, data: 'b', id: undefined },
    ]);
  });

  it('ignores events without data, strips a BOM, and discards an unterminated trailing event', () => {
    const p = new SseParser();
    const out: SseEvent[] = [];
    p.push('\uFEFFevent: ping\n\ndata: x\n\ndata: partial', out);
    expect(out).toEqual([{ event: undefined, data: 'x', id: undefined }]);
    expect(p.end()).toBe(true);
  });

  it('does not corrupt multi-byte UTF-8 split between chunks', () => {
    const bytes = Buffer.from('data: héllo wörld 🚀 ✓\n\n', 'utf8');
    for (let i = 0; i <= bytes.length; i++) {
      expect(parseAll([bytes.subarray(0, i), bytes.subarray(i)])).toEqual([
        { event: undefined, data: 'héllo wörld 🚀 ✓', id: undefined },
      ]);
    }
  });

  it('gives the same events for any chunking (property)', () => {
    const line = fc.stringMatching(/^[^\r\n]*$/);
    const event = fc.record({
      event: fc.option(fc.stringMatching(/^[a-z_]{1,12}$/), { nil: undefined }),
      data: fc.array(line, { minLength: 1, maxLength: 4 }),
      eol: fc.constantFrom('\n', '\r\n', '\r'),
      comment: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(event, { minLength: 1, maxLength: 12 }),
        fc.array(fc.nat(), { maxLength: 30 }),
        (events, cuts) => {
          let text = '';
          for (const e of events) {
            if (e.comment) text += `: comment${e.eol}`;
            if (e.event !== undefined) text += `event: ${e.event}${e.eol}`;
            for (const d of e.data) text += `data: ${d}${e.eol}`;
            text += e.eol;
          }
          const expected = events.map((e) => ({ event: e.event, data: e.data.join('\n'), id: undefined }));
          const bytes = Buffer.from(text, 'utf8');
          expect(parseAll([bytes])).toEqual(expected);
          expect(parseAll(splitAt(bytes, cuts))).toEqual(expected);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('byte-at-a-time input', () => {
    const bytes = Buffer.from('event: e\r\ndata: {"x":"ü"}\r\n\r\ndata: 2\n\n');
    const chunks: Uint8Array[] = [];
    for (let i = 0; i < bytes.length; i++) chunks.push(bytes.subarray(i, i + 1));
    expect(parseAll(chunks)).toEqual([
      { event: 'e', data: '{"x":"ü"}', id: undefined },
      { event: undefined, data: '2', id: undefined },
    ]);
  });

  it('parses a large stream in linear time', () => {
    const one = `data: ${JSON.stringify({ choices: [{ delta: { content: 'x'.repeat(40) } }] })}\n\n`;
    const big = Buffer.from(one.repeat(50_000));
    const chunks = splitAt(
      big,
      Array.from({ length: 5000 }, (_, i) => i * 997),
    );
    const start = performance.now();
    const events = parseAll(chunks);
    expect(events.length).toBe(50_000);
    expect(performance.now() - start).toBeLessThan(2000);
  });
});

describe('parseSse', () => {
  it('iterates an async byte source and reports truncation', async () => {
    async function* src() {
      yield Buffer.from('data: 1\n\nda');
      yield Buffer.from('ta: 2\n\ndata: 3');
    }
    const state = { truncated: false };
    const got: string[] = [];
    for await (const e of parseSse(src(), state)) got.push(e.data);
    expect(got).toEqual(['1', '2']);
    expect(state.truncated).toBe(true);
  });
});
