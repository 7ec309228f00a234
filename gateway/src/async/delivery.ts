import type { TraceContext } from '../tracing/types.ts';
import type { ChannelDoc, ChannelRecord } from './channels.ts';
import type { AsyncDeps } from './deps.ts';

/** What a pipeline workflow's backend is called back with, and how to answer. */
export function aiGenerated(doc: ChannelDoc): Record<string, unknown> {
  return {
    event: doc.event_name,
    channel_id: doc.channel_id,
    ai_response: doc.ai_response,
    callback_url: `${doc.base_url}/v1/callback/${doc.channel_id}`,
    callback_required: true,
  };
}

/** The final result: pub/sub to whichever pod holds the socket, then the webhook (under `trace`). */
export async function deliver(
  d: AsyncDeps,
  rec: ChannelRecord,
  callback?: { task_id: string | null; metadata: Record<string, unknown> },
  trace: TraceContext | undefined = rec.doc.trace,
): Promise<void> {
  const { doc } = rec;
  if (!doc.result) return;
  await d.bus.publish({ projectId: doc.project_id, channelId: doc.channel_id, result: doc.result });
  const project = d.snapshots.current?.projects.get(doc.project_id);
  if (!project) return;
  const common = {
    channel_id: doc.channel_id,
    status: doc.result.meta.status,
    data: doc.result.data,
    meta: doc.result.meta,
    workflow: doc.workflow,
  };
  if (rec.state === 'timed_out')
    await d.webhooks.emit(
      project,
      'callback.timeout',
      { ...common, event: doc.event_name, error: doc.result.error },
      doc.channel_id,
      trace,
    );
  else if (rec.state === 'failed')
    // A pipeline workflow whose AI step failed never reached its backend: an error, not a task.
    await d.webhooks.emit(
      project,
      'ai.error',
      { ...common, ...(doc.event_name ? { event: doc.event_name } : {}), error: doc.result.error },
      doc.channel_id,
      trace,
    );
  else if (doc.event_name)
    await d.webhooks.emit(
      project,
      'task.completed',
      { ...common, event: doc.event_name, ...callback },
      doc.channel_id,
      trace,
    );
  else await d.webhooks.emit(project, 'ai.response', common, doc.channel_id, trace);
}

/**
 * A job run again after a crash between completing its channel and acknowledging the job: what the
 * channel's state asks for is delivered again (sockets and webhooks deduplicate); nothing runs.
 */
export async function redeliver(d: AsyncDeps, rec: ChannelRecord): Promise<void> {
  if (rec.state === 'awaiting_callback') {
    const project = d.snapshots.current?.projects.get(rec.doc.project_id);
    const deadline = rec.doc.deadline_at ?? d.now();
    await d.runner.scheduleTimer(
      { kind: 'deadline', channelId: rec.doc.channel_id, projectId: rec.doc.project_id, atMs: deadline },
      deadline,
    );
    if (project)
      await d.webhooks.emit(
        project,
        'task.ai_generated',
        aiGenerated(rec.doc),
        rec.doc.channel_id,
        rec.doc.trace,
      );
    return;
  }
  await deliver(d, rec);
}
