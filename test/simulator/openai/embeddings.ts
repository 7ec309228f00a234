/** POST /v1/embeddings: hash-derived unit vectors (8 dims unless `dimensions` says otherwise). */
import type { Exchange } from '../exchange.ts';
import { DEFAULT_EMBEDDING_DIMS, embedding, embeddingBase64, tokens } from '../generate.ts';
import { sendJson } from '../respond.ts';
import type { EmbeddingRequest } from './schemas.ts';

function inputs(input: EmbeddingRequest['input']): string[] {
  if (typeof input === 'string') return [input];
  if (input.every((x) => typeof x === 'string')) return input as string[];
  if (input.every((x) => typeof x === 'number')) return [JSON.stringify(input)];
  return (input as number[][]).map((x) => JSON.stringify(x));
}

export async function handleEmbeddings(ex: Exchange): Promise<void> {
  const req = ex.body as EmbeddingRequest;
  const texts = inputs(req.input);
  const dims = req.dimensions ?? DEFAULT_EMBEDDING_DIMS;
  const promptTokens = texts.reduce((n, t) => n + tokens(t), 0);
  return sendJson(ex, 200, {
    object: 'list',
    data: texts.map((t, index) => {
      const vector = embedding(t, dims);
      return {
        object: 'embedding',
        index,
        embedding: req.encoding_format === 'base64' ? embeddingBase64(vector) : vector,
      };
    }),
    model: ex.model,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  });
}
