/** GET /v1/models and /v1/models/{id}: a fixed catalogue (any id is "found", since models are simulated). */
import type { Exchange } from '../exchange.ts';
import { sendJson } from '../respond.ts';

export const MODEL_IDS = [
  'gpt-4o',
  'gpt-4o-mini',
  'gpt-4.1',
  'gpt-3.5-turbo-instruct',
  'text-embedding-3-small',
  'text-embedding-3-large',
  'dall-e-3',
  'gpt-image-1',
  'whisper-1',
  'tts-1',
];

const CREATED = 1_700_000_000;

function model(id: string) {
  return { id, object: 'model', created: CREATED, owned_by: 'system' };
}

export async function handleListModels(ex: Exchange): Promise<void> {
  return sendJson(ex, 200, { object: 'list', data: MODEL_IDS.map(model) });
}

export async function handleGetModel(ex: Exchange): Promise<void> {
  return sendJson(ex, 200, model(decodeURIComponent(ex.url.pathname.slice('/v1/models/'.length))));
}
