import type { Exchange } from '../pipeline/exchange.ts';
import type { StreamEnd } from '../pipeline/outcome.ts';
import type { Prepared } from '../pipeline/prepare.ts';
import { resultEvents } from '../providers/replay.ts';
import type { CanonicalResult, StreamEvent, Usage } from '../providers/types.ts';
import { checkStructured } from '../structured/validate.ts';

/** Pieces a replayed answer is sent in: the chunk format of a live stream, without its wait. */
const PIECE = 64;
const pieces = (text: string): string[] => {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += PIECE) out.push(text.slice(i, i + PIECE));
  return out;
};

/**
 * A cache hit for a streamed request: the cached answer as stream events (content, finish), in the
 * same shape followStream yields for a live stream, ending with the usage it was stored with.
 */
export async function* replayHit(
  ex: Exchange,
  result: CanonicalResult,
): AsyncGenerator<StreamEvent, StreamEnd, void> {
  let usage: Usage | undefined;
  for await (const ev of resultEvents(result, pieces)) {
    if (ev.type === 'usage') {
      usage = ev.usage;
      continue;
    }
    ex.record.ttftMs ??= performance.now() - ex.startedAt;
    yield ev;
  }
  return { ok: true, usage };
}

/** The structured-output value of a cached answer (it passed the schema check when it was stored). */
export function structuredOf(p: Prepared, result: CanonicalResult): unknown {
  if (!p.plan.structured && !p.plan.json) return undefined;
  if (result.kind === 'chat' && result.tool_calls?.length) return undefined;
  const text = result.kind === 'chat' ? result.content : result.kind === 'completion' ? result.text : null;
  const check = checkStructured(text, p.plan.structured?.schema);
  return check.ok ? check.value : undefined;
}
