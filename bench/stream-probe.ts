import { Pool } from 'undici';
import { type Percentiles, percentiles } from './load.ts';
import type { RequestSpec } from './targets.ts';

/**
 * Streaming probe: sends stream requests and timestamps every SSE event that carries content.
 * Time to first token = send → first content event; gaps = time between consecutive content events.
 */

export interface StreamResult {
  streams: number;
  errors: number;
  ttft: Percentiles;
  gap: Percentiles;
  eventsPerStream: number;
  /** The first failure, if any stream failed. */
  firstError?: string;
}

function hasContent(data: string): boolean {
  if (data === '[DONE]') return false;
  try {
    // Chat chunks, Responses text deltas and Messages text deltas.
    const j = JSON.parse(data) as {
      choices?: { delta?: { content?: string | null } }[];
      type?: string;
      delta?: string | { text?: string };
    };
    const c =
      j.choices?.[0]?.delta?.content ??
      (j.type === 'response.output_text.delta' ? j.delta : undefined) ??
      (j.type === 'content_block_delta' && typeof j.delta === 'object' ? j.delta.text : undefined);
    return typeof c === 'string' && c.length > 0;
  } catch {
    return false;
  }
}

async function oneStream(
  pool: Pool,
  spec: RequestSpec,
): Promise<{ ttft: number; gaps: number[]; events: number }> {
  const url = new URL(spec.url);
  const t0 = performance.now();
  const res = await pool.request({
    method: 'POST',
    path: url.pathname,
    headers: spec.headers,
    body: spec.body,
  });
  if (res.statusCode !== 200) {
    const text = await res.body.text();
    throw new Error(`stream answered ${res.statusCode}: ${text.slice(0, 200)}`);
  }
  let buf = '';
  let first = Number.NaN;
  let last = Number.NaN;
  const gaps: number[] = [];
  let events = 0;
  for await (const chunk of res.body) {
    const now = performance.now();
    buf += (chunk as Buffer).toString('utf8');
    let idx = buf.indexOf('\n');
    while (idx >= 0) {
      const line = buf.slice(0, idx).trim();
      buf = buf.slice(idx + 1);
      idx = buf.indexOf('\n');
      if (!line.startsWith('data:')) continue;
      if (!hasContent(line.slice(5).trim())) continue;
      events++;
      if (Number.isNaN(first)) first = now - t0;
      else gaps.push(now - last);
      last = now;
    }
  }
  return { ttft: first, gaps, events };
}

/** `total` streams, `concurrency` at a time. */
export async function streamProbe(
  spec: RequestSpec,
  total: number,
  concurrency: number,
): Promise<StreamResult> {
  const pool = new Pool(new URL(spec.url).origin, { connections: concurrency });
  const ttfts: number[] = [];
  const gaps: number[] = [];
  let events = 0;
  let errors = 0;
  let firstError: string | undefined;
  let next = 0;
  const worker = async () => {
    while (next < total) {
      next++;
      try {
        const r = await oneStream(pool, spec);
        if (Number.isNaN(r.ttft)) errors++;
        else ttfts.push(r.ttft);
        gaps.push(...r.gaps);
        events += r.events;
      } catch (err) {
        errors++;
        firstError ??= err instanceof Error ? err.message : String(err);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await pool.close();
  return {
    streams: ttfts.length,
    errors,
    ttft: percentiles(ttfts),
    gap: percentiles(gaps),
    eventsPerStream: ttfts.length ? events / ttfts.length : 0,
    ...(firstError ? { firstError } : {}),
  };
}
