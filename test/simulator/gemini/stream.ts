/**
 * Gemini streaming. With `alt=sse`: `data: <GenerateContentResponse>\r\n\r\n` events (CRLF, as Google's
 * front end sends them), no terminator event; the last event carries finishReason and the full
 * usageMetadata. Without `alt=sse` the same objects arrive as one incrementally written JSON array.
 * A functionCall is never split: it arrives whole in a single event.
 */
import { splitChunks } from '../generate.ts';
import { dataFrame, type Frame } from '../sse.ts';
import { type GeminiPartOut, type GenerateOutcome, usageMetadata } from './shapes.ts';

export function streamFrames(o: GenerateOutcome, chunks: number, sse: boolean): Frame[] {
  const pieces: GeminiPartOut[] =
    'text' in o.part ? splitChunks(o.part.text, chunks).map((text) => ({ text })) : [o.part];
  const bodies = pieces.map((part, i) => {
    const lastOne = i === pieces.length - 1;
    const candidate: Record<string, unknown> = { content: { parts: [part], role: 'model' }, index: 0 };
    if (lastOne) candidate.finishReason = o.finishReason;
    return {
      candidates: [candidate],
      usageMetadata: lastOne ? usageMetadata(o) : usageMetadata(o, 0),
      modelVersion: o.model,
      responseId: o.responseId,
    };
  });
  if (sse) return bodies.map((b) => dataFrame(b, true, '\r\n'));
  const frames: Frame[] = bodies.map((b, i) => ({
    prefix: i === 0 ? '[' : ',\r\n',
    json: JSON.stringify(b),
    suffix: '',
    paced: true,
  }));
  frames.push({ prefix: '', json: '', suffix: ']' });
  return frames;
}
