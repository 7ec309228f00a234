/**
 * What the routing units are driven with: a runtime compiled from manifests (the same compiler the
 * gateway serves), plans and requests made by the pipeline's own `prepare`, and the spend feature's
 * real slot guard on an in-memory store. The upstream is the provider simulator.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Registry } from 'prom-client';
import { expect } from 'vitest';
import { stringify } from 'yaml';
import { type AuthContext, authenticate } from '#gateway/auth/authenticate';
import { GatewayError } from '#gateway/errors/index';
import { openExchange } from '#gateway/pipeline/exchange';
import { type Prepared, prepare } from '#gateway/pipeline/prepare';
import type { NativeBody } from '#gateway/requests/native-schema';
import type { SlotGuard } from '#gateway/routing/plan';
import type { Runtime } from '#gateway/snapshot/runtime';
import { SnapshotStore } from '#gateway/snapshot/store';
import { limitsAndCaps } from '#gateway/spend/feature';
import { MemoryGuardStore } from '#gateway/spend/memory-store';
import { NO_TRACE } from '#gateway/tracing/off';
import { loadInto } from '../../embedded/config-source.ts';
import { API_KEY } from '../harness/manifests.ts';

/** Compiles manifests (Kubernetes objects) into the gateway's runtime form. */
export async function compileRuntime(manifests: readonly object[]): Promise<Runtime> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-routing-'));
  try {
    await writeFile(join(dir, 'config.yaml'), manifests.map((m) => stringify(m)).join('---\n'));
    const sealKey = randomBytes(32);
    const store = new SnapshotStore(sealKey);
    await loadInto(dir, store, sealKey, pino({ level: 'silent' }));
    if (!store.current) throw new Error('the manifests compiled to no snapshot');
    return store.current;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export const authOf = (runtime: Runtime, key = API_KEY): AuthContext =>
  authenticate(`Bearer ${key}`, runtime, Date.now());

/** A native request body prepared as the pipeline prepares it: its plan and canonical request. */
export const prepared = (runtime: Runtime, body: NativeBody): Prepared =>
  prepare(authOf(runtime), body, { async: false });

/** A native chat body for `workflow`. */
export const chat = (workflow: string, extra: Partial<NativeBody> = {}): NativeBody => ({
  workflow,
  messages: [{ role: 'user', content: 'Where is my order?' }],
  ...extra,
});

/** The spend feature (limits and caps) on an in-memory store, as a pod runs it. */
export function spendCaps(runtime: Runtime) {
  const now = () => Date.parse('2026-11-25T12:00:00Z');
  const feature = limitsAndCaps({
    store: new MemoryGuardStore(now),
    registry: new Registry(),
    logger: pino({ level: 'silent' }),
    now,
    thresholds: { log: () => {}, emit: () => {} },
    member: 'pod-routing',
  });
  return {
    /**
     * The slot guard of one exchange for `p`, as the pipeline hands it to the chain, and the end
     * of that exchange (refused: every hold it still has is given back).
     */
    async begin(p: Prepared): Promise<{ guard: SlotGuard | undefined; finish: () => void }> {
      const ex = openExchange({
        id: `ex-${randomBytes(4).toString('hex')}`,
        kind: 'request',
        surface: 'native',
        auth: authOf(runtime),
        signal: new AbortController().signal,
        trace: NO_TRACE,
      });
      const run = await feature.begin({ ex, p, providerOptional: false });
      return {
        guard: run?.toChain?.(p),
        finish: () => {
          run?.finish({
            kind: 'refused',
            error: new GatewayError('invalid_request', 'the exchange is over'),
          });
        },
      };
    },
    close: () => feature.close(),
  };
}

/** Provider timeouts short enough for a hanging upstream to fail within a test's budget. */
export const FAST = { timeouts: { connectMs: 500, firstByteMs: 200, totalMs: 1000 } };

/** An attempt's `duration_ms`: measured, so only its type is known. */
export const ms = expect.any(Number);
