import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { microsToUsd } from '#contract';
import { mergeCallback } from '../async/callbacks.ts';
import { type ChannelDoc, type ResultBody, topicOf } from '../async/channels.ts';
import { aiGenerated } from '../async/delivery.ts';
import { requireScope } from '../auth/authenticate.ts';
import { wrappedBody } from '../encoders/encode-native.ts';
import { GatewayError } from '../errors/index.ts';
import { baseUrlOf } from '../http/async-routes.ts';
import { authOf, serve } from '../http/context.ts';
import type { Pipeline } from '../pipeline/run.ts';
import { LIMITS } from '../requests/limits.ts';
import { nativeBody } from '../requests/native-schema.ts';
import { parseBody } from '../requests/zod-error.ts';
import { signatureHeaders } from '../webhooks/sign.ts';
import { CONSOLE_SOURCE } from './playground.ts';

export interface PipelineSimOptions {
  /** How long the simulated backend takes to call back (about 1.5 s by default). */
  backendMs: number;
  now: () => number;
  /** Waits `ms` (injected by tests). */
  sleep?: (ms: number) => Promise<void>;
}

const wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * POST /console/api/playground/pipeline: a backend-pipeline workflow (one with `eventName`) tried
 * from the playground. The AI step runs for real (the same pipeline as /v1/ai, logged as from the
 * console); the `task.ai_generated` webhook is built and signed as the dispatcher would send it, and
 * shown instead of sent; a simulated backend answers after `backendMs` with an `id` in `data`; and
 * the result is merged by the code that merges a real callback, shown as the WebSocket `response`
 * event carries it. Nothing is queued, stored or delivered.
 */
export function pipelineSimRoute(app: FastifyInstance, pipeline: Pipeline, o: PipelineSimOptions): void {
  app.post(
    '/api/playground/pipeline',
    { config: { surface: 'native', scope: 'console' }, bodyLimit: LIMITS.nativeBodyBytes },
    async (req, reply) => {
      req.logDetails = { ...CONSOLE_SOURCE, simulation: 'backend_pipeline' };
      const auth = authOf(req);
      requireScope(auth, 'ai');
      const body = parseBody(nativeBody, req.body);
      const wf = body.workflow ? auth.project.workflows.get(body.workflow) : undefined;
      if (!wf?.config.eventName)
        throw new GatewayError(
          'invalid_request',
          `The backend-pipeline simulation needs a workflow with an event name; "${body.workflow ?? ''}" has none.`,
          { param: 'workflow', hint: 'Send it from the playground as an ordinary request.' },
        );
      const eventName = wf.config.eventName;
      const { ex, result } = await serve(pipeline, req, reply, 'native', {
        body: { ...body, format: 'wrapped', stream: false },
        stream: false,
        pipelineSimulation: true,
      });
      if (result.kind === 'streaming') throw new Error('a pipeline simulation produced a stream');
      const ai = wrappedBody(ex, result) as ResultBody;
      const micros = result.kind === 'answered' ? result.answer.costMicros : result.failure.costMicros;
      const channelId = randomUUID();
      const projectId = auth.project.config.id;
      const playground = { cost_usd: micros === null ? null : microsToUsd(micros), ttft_ms: null };
      const channel = (msg: string) => ({ channel_id: channelId, simulated: true, note: msg });
      if (result.kind === 'failed')
        // A failed AI step never reaches the backend: the real flow sends `ai.error` and no task.
        return {
          ai_response: ai,
          playground,
          channel: channel('The AI step failed: no task.ai_generated is sent and no backend is called.'),
        };
      const doc = {
        channel_id: channelId,
        event_name: eventName,
        ai_response: ai,
        base_url: baseUrlOf(req, undefined),
      } as ChannelDoc;
      const startedAt = o.now();
      const payload = JSON.stringify({
        type: 'task.ai_generated',
        timestamp: new Date(startedAt).toISOString(),
        ...aiGenerated(doc),
      });
      const webhookId = `msg_sim_${channelId.replaceAll('-', '')}`;
      const unix = Math.floor(startedAt / 1000);
      const endpoints = auth.project.webhooks
        .filter((w) => w.events.includes('task.ai_generated'))
        .map((w) => ({ url: w.url, headers: signatureHeaders(w.secrets, webhookId, unix, payload) }));
      await (o.sleep ?? wait)(o.backendMs);
      const backend = {
        data: { id: randomUUID() },
        task_id: `simulated-${channelId}`,
        metadata: { simulated: true },
      };
      const merged = mergeCallback(ai, backend.data);
      return {
        ai_response: ai,
        playground,
        channel: channel('Simulated: nothing was queued, stored or sent.'),
        webhook: { event: 'task.ai_generated', webhook_id: webhookId, payload, endpoints },
        backend: { ...backend, delay_ms: o.backendMs, waited_ms: o.now() - startedAt },
        response: { topic: topicOf(projectId, channelId), event: 'response', payload: merged },
      };
    },
  );
}
