/**
 * POST /v1/images/generations: `n` 1x1 PNGs, as URLs served by the simulator (/_sim/files/...) or inline
 * b64_json. gpt-image-* models always answer b64_json (and report usage), as the real API does.
 */
import type { Exchange } from '../exchange.ts';
import { fnv1a, tokens, unixSeconds } from '../generate.ts';
import { PNG_1X1 } from '../media.ts';
import { sendJson } from '../respond.ts';
import type { ImageRequest } from './schemas.ts';

export async function handleImages(ex: Exchange): Promise<void> {
  const req = ex.body as ImageRequest;
  const gptImage = ex.model.startsWith('gpt-image');
  const b64 = gptImage || req.response_format === 'b64_json';
  const n = req.n ?? 1;
  const data = Array.from({ length: n }, (_, i) => {
    const item: Record<string, unknown> = b64
      ? { b64_json: PNG_1X1.toString('base64') }
      : { url: `${ex.baseUrl}/_sim/files/img-${fnv1a(`${req.prompt}|${i}`).toString(16)}.png` };
    if (ex.model.startsWith('dall-e-3')) item.revised_prompt = req.prompt;
    return item;
  });
  const body: Record<string, unknown> = { created: unixSeconds(), data };
  if (gptImage) {
    const input = tokens(req.prompt);
    body.usage = {
      input_tokens: input,
      output_tokens: 272 * n,
      total_tokens: input + 272 * n,
      input_tokens_details: { text_tokens: input, image_tokens: 0 },
    };
  }
  return sendJson(ex, 200, body);
}
