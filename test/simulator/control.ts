/**
 * HTTP control API for out-of-process callers:
 *   POST   /_sim/faults     add a FaultRule (JSON body)        → 201 { ok: true }
 *   DELETE /_sim/faults     remove every rule                  → 200 { ok: true }
 *   GET    /_sim/requests   recorded requests, oldest first    → 200 RecordedRequest[]
 *   DELETE /_sim/requests   forget recorded requests           → 200 { ok: true }
 *   GET    /_sim/health     liveness                           → 200 { ok: true }
 *   GET    /_sim/files/<name>.png   the image behind generated image URLs
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { decodeJson, readBody } from './body.ts';
import type { FaultStore } from './faults.ts';
import { PNG_1X1 } from './media.ts';
import type { Recorder } from './recorder.ts';
import type { FaultRule } from './types.ts';

const count = z.number().int().nonnegative();

export const faultRuleSchema = z.strictObject({
  match: z
    .strictObject({
      provider: z
        .enum([
          'openai',
          'azure-openai',
          'anthropic',
          'gemini',
          'bedrock',
          'vertex-ai',
          'cohere',
          'aws-sts',
          'google-auth',
        ])
        .optional(),
      model: z.string().optional(),
      path: z.string().optional(),
    })
    .optional(),
  times: z.number().int().positive().optional(),
  status: z.number().int().min(100).max(599).optional(),
  retryAfter: count.optional(),
  delayMs: count.optional(),
  firstByteDelayMs: count.optional(),
  hang: z.boolean().optional(),
  cutAfterChunks: count.optional(),
  malformed: z.enum(['body', 'chunk']).optional(),
  deepJson: z.number().int().positive().max(1_000_000).optional(),
  resetConnection: z.boolean().optional(),
  streamChunks: z.number().int().positive().optional(),
  chunkIntervalMs: count.optional(),
  corruptCrc: z.boolean().optional(),
  promptTokens: count.optional(),
  cachedTokens: count.optional(),
  cacheWriteTokens: count.optional(),
  toolCall: z.strictObject({ name: z.string().min(1), args: z.record(z.string(), z.unknown()) }).optional(),
}) satisfies z.ZodType<FaultRule>;

function json(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(body)),
  });
  res.end(body);
}

export async function handleControl(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  ctl: { faults: FaultStore; recorder: Recorder },
): Promise<void> {
  const raw = await readBody(req);
  const key = `${req.method} ${url.pathname}`;
  if (key === 'POST /_sim/faults') {
    const decoded = decodeJson(raw);
    const parsed = decoded.ok ? faultRuleSchema.safeParse(decoded.body) : undefined;
    if (!parsed?.success) {
      return json(res, 400, { error: decoded.ok ? parsed?.error.issues : decoded.error });
    }
    ctl.faults.add(parsed.data);
    return json(res, 201, { ok: true });
  }
  if (key === 'DELETE /_sim/faults') {
    ctl.faults.clear();
    return json(res, 200, { ok: true });
  }
  if (key === 'GET /_sim/requests') return json(res, 200, ctl.recorder.list());
  if (key === 'DELETE /_sim/requests') {
    ctl.recorder.clear();
    return json(res, 200, { ok: true });
  }
  if (key === 'GET /_sim/health') return json(res, 200, { ok: true });
  if (req.method === 'GET' && /^\/_sim\/files\/[\w.-]+\.png$/.test(url.pathname)) {
    res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(PNG_1X1.length) });
    res.end(PNG_1X1);
    return;
  }
  json(res, 404, { error: `unknown control route ${key}` });
}
