/**
 * Vertex AI URLs and bodies. Gemini models (publisher google) take the Gemini API's bodies at
 * generateContent / streamGenerateContent (and Imagen / embedding models at predict); Anthropic's
 * Claude models (publisher anthropic) take the Messages API body at rawPredict / streamRawPredict,
 * with the model in the URL and Vertex's `anthropic_version` in the body.
 */
import { trimSlash } from '../common.ts';
import { refuseParam } from '../optional-params.ts';
import type { EmbeddingRequest, UpstreamTarget } from '../types.ts';

export type VertexOp =
  | 'generateContent'
  | 'streamGenerateContent'
  | 'rawPredict'
  | 'streamRawPredict'
  | 'predict';
export type Publisher = 'google' | 'anthropic';

export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

export const publisherOf = (model: string): Publisher =>
  /(^|\/)claude-/.test(model) ? 'anthropic' : 'google';

export function vertexUrl(target: UpstreamTarget, op: VertexOp): string {
  const project = encodeURIComponent(target.options?.project ?? '');
  const location = encodeURIComponent(target.options?.region ?? 'us-central1');
  const publisher = publisherOf(target.model);
  const url = `${trimSlash(target.baseURL)}/v1/projects/${project}/locations/${location}/publishers/${publisher}/models/${encodeURIComponent(target.model)}:${op}`;
  return op === 'streamGenerateContent' ? `${url}?alt=sse` : url;
}

export const isEmbeddingModel = (model: string): boolean => /embedding/.test(model);

/** gemini-embedding models embed one text per call; the text-embedding family takes a list. */
export function buildVertexEmbedBodies(model: string, req: EmbeddingRequest): string[] {
  const inputs = typeof req.input === 'string' ? [req.input] : req.input;
  if (req.dimensions !== undefined && !(req.dimensions > 0))
    throw refuseParam('vertex-ai', 'dimensions', 'must be a positive number');
  const parameters = req.dimensions === undefined ? undefined : { outputDimensionality: req.dimensions };
  const body = (texts: string[]) =>
    JSON.stringify({
      instances: texts.map((content) => ({ content })),
      ...(parameters ? { parameters } : {}),
    });
  return model.includes('gemini-embedding') ? inputs.map((t) => body([t])) : [body(inputs)];
}
