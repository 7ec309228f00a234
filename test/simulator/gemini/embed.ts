/** :embedContent, :batchEmbedContents and :countTokens. */
import type { Exchange } from '../exchange.ts';
import { DEFAULT_EMBEDDING_DIMS, embedding, tokens } from '../generate.ts';
import { sendJson } from '../respond.ts';
import type { BatchEmbedContentsRequest, EmbedContentRequest } from './schemas.ts';

function textOf(content: EmbedContentRequest['content']): string {
  return content.parts.map((p) => p.text ?? '').join(' ');
}

export async function handleEmbed(ex: Exchange): Promise<void> {
  const req = ex.body as EmbedContentRequest;
  const values = embedding(textOf(req.content), req.outputDimensionality ?? DEFAULT_EMBEDDING_DIMS);
  return sendJson(ex, 200, { embedding: { values } });
}

export async function handleBatchEmbed(ex: Exchange): Promise<void> {
  const req = ex.body as BatchEmbedContentsRequest;
  return sendJson(ex, 200, {
    embeddings: req.requests.map((r) => ({
      values: embedding(textOf(r.content), r.outputDimensionality ?? DEFAULT_EMBEDDING_DIMS),
    })),
  });
}

export async function handleCountTokens(ex: Exchange): Promise<void> {
  const body = ex.body as { contents?: unknown; generateContentRequest?: unknown };
  const total = tokens(JSON.stringify(body.contents ?? body.generateContentRequest ?? ''));
  return sendJson(ex, 200, {
    totalTokens: total,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: total }],
  });
}
