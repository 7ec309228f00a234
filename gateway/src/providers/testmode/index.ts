import { resultEvents } from '../replay.ts';
import type {
  CallContext,
  CanonicalRequest,
  CanonicalResult,
  ChatRequest,
  CompletionRequest,
  StreamEvent,
  UpstreamTarget,
} from '../types.ts';
import {
  approxTokens,
  digest,
  embeddingOf,
  generateChat,
  PIXEL_PNG_BASE64,
  silentWav,
  usageOf,
} from './generate.ts';

const CHUNKS = 8;
const DEFAULT_DIMS = 16;

/** Splits text into about CHUNKS pieces on word boundaries, as a provider stream would. */
function pieces(text: string): string[] {
  const words = text.split(/(?<=\s)/);
  const per = Math.max(1, Math.ceil(words.length / CHUNKS));
  const out: string[] = [];
  for (let i = 0; i < words.length; i += per) out.push(words.slice(i, i + per).join(''));
  return out;
}

/**
 * The test-mode generator: answers every request type offline, deterministically and at zero cost.
 * It has the shape of a provider adapter so the gateway runs exactly the same path as in production.
 */
export const testModeAdapter = {
  type: 'testmode' as const,
  supportsNativeStructuredOutput: true,
  supports: (): boolean => true,

  async call(target: UpstreamTarget, req: CanonicalRequest, _ctx: CallContext): Promise<CanonicalResult> {
    const id = `tm-${digest(JSON.stringify(req, (_k, v: unknown) => (v instanceof Uint8Array ? v.length : v)))
      .toString('hex')
      .slice(0, 24)}`;
    switch (req.kind) {
      case 'chat': {
        const g = generateChat(req, target.model);
        return {
          kind: 'chat',
          id,
          content: g.content,
          ...(g.toolCalls ? { tool_calls: g.toolCalls } : {}),
          finish_reason: g.finishReason,
          usage: g.usage,
          model: target.model,
        };
      }
      case 'completion': {
        const text = ` This is a test-mode completion from ${target.model}.`;
        return {
          kind: 'completion',
          id,
          text,
          finish_reason: 'stop',
          usage: usageOf(req.prompt, text),
          model: target.model,
        };
      }
      case 'embedding': {
        const inputs = typeof req.input === 'string' ? [req.input] : req.input;
        const dims = req.dimensions ?? DEFAULT_DIMS;
        const vectors = inputs.map((t) => embeddingOf(t, dims));
        const embeddings =
          req.encoding_format === 'base64'
            ? vectors.map((v) => Buffer.from(new Float32Array(v).buffer).toString('base64'))
            : vectors;
        const prompt = inputs.reduce((s, t) => s + approxTokens(t), 0);
        return {
          kind: 'embedding',
          embeddings,
          usage: { prompt_tokens: prompt, completion_tokens: 0, total_tokens: prompt },
          model: target.model,
        };
      }
      case 'image': {
        const n = req.n ?? 1;
        const images = Array.from({ length: n }, () =>
          req.response_format === 'b64_json'
            ? { b64_json: PIXEL_PNG_BASE64, revised_prompt: req.prompt }
            : { url: `data:image/png;base64,${PIXEL_PNG_BASE64}`, revised_prompt: req.prompt },
        );
        return { kind: 'image', created: Math.floor(Date.now() / 1000), images };
      }
      case 'transcription':
        return {
          kind: 'transcription',
          text: `Test-mode transcription of ${req.file.length} bytes of audio.`,
          durationSeconds: 0.1,
        };
      case 'speech':
        return { kind: 'speech', audio: silentWav(), format: 'wav', contentType: 'audio/wav' };
    }
  },

  async *stream(
    target: UpstreamTarget,
    req: ChatRequest | CompletionRequest,
    ctx: CallContext,
  ): AsyncIterable<StreamEvent> {
    yield* resultEvents(await testModeAdapter.call(target, req, ctx), pieces);
  },
};
