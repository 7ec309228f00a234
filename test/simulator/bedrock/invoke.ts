/**
 * POST /model/{id}/invoke: the model family's own schema. Titan and Cohere embedding models, Titan
 * Image Generator and Nova Canvas. Token counts also come back in Bedrock's count headers.
 */
import type { Exchange } from '../exchange.ts';
import { embedding, tokens } from '../generate.ts';
import { PNG_1X1 } from '../media.ts';
import { sendError, sendJson } from '../respond.ts';
import { validate } from '../validate.ts';
import { bedrockError, bedrockInvalidRequest } from './errors.ts';
import { cohereEmbedRequest, titanEmbedRequest, titanImageRequest } from './schemas.ts';

const counts = (input: number, output = 0) => ({
  'x-amzn-bedrock-input-token-count': String(input),
  'x-amzn-bedrock-output-token-count': String(output),
});

export async function handleInvoke(ex: Exchange): Promise<void> {
  const m = ex.model;
  const schema = m.includes('amazon.titan-embed')
    ? titanEmbedRequest
    : m.includes('cohere.embed')
      ? cohereEmbedRequest
      : m.includes('amazon.titan-image-generator') || m.includes('amazon.nova-canvas')
        ? titanImageRequest
        : undefined;
  if (!schema)
    return sendError(
      ex,
      bedrockError(400, 'ValidationException', 'The provided model identifier is invalid.'),
    );
  const issues = validate(schema, ex.body);
  if (issues) return sendError(ex, bedrockInvalidRequest(issues));
  if (schema === titanEmbedRequest) {
    const req = ex.body as { inputText: string; dimensions?: number };
    const n = tokens(req.inputText);
    return sendJson(
      ex,
      200,
      { embedding: embedding(req.inputText, req.dimensions ?? 1024), inputTextTokenCount: n },
      counts(n),
    );
  }
  if (schema === cohereEmbedRequest) {
    const req = ex.body as { texts: string[]; embedding_types?: string[]; output_dimension?: number };
    const vectors = req.texts.map((t) => embedding(t, req.output_dimension ?? 1024));
    const n = req.texts.reduce((s, t) => s + tokens(t), 0);
    const embeddings = req.embedding_types ? { float: vectors } : vectors;
    return sendJson(
      ex,
      200,
      {
        id: `sim-${n}`,
        embeddings,
        texts: req.texts,
        response_type: req.embedding_types ? 'embeddings_by_type' : 'embeddings_floats',
      },
      counts(n),
    );
  }
  const req = ex.body as { imageGenerationConfig?: { numberOfImages?: number } };
  const images = Array.from({ length: req.imageGenerationConfig?.numberOfImages ?? 1 }, () =>
    PNG_1X1.toString('base64'),
  );
  return sendJson(ex, 200, { images, error: null });
}
