import { Fields } from './ui.tsx';

/** What POST console/api/playground/pipeline answers beside the AI step's wrapped body. */
export interface PipelineSim {
  channel: { channel_id: string; simulated: true; note: string };
  webhook?: {
    event: string;
    webhook_id: string;
    /** The JSON text that would be signed and sent. */
    payload: string;
    endpoints: { url: string; headers: Record<string, string> }[];
  };
  backend?: {
    data: Record<string, unknown>;
    task_id: string;
    metadata: Record<string, unknown>;
    delay_ms: number;
    waited_ms: number;
  };
  response?: { topic: string; event: string; payload: unknown };
}

const pretty = (json: string): string => {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
};

/** The three simulated steps after the real AI step: webhook, backend, and the merged `response` event. */
export function PipelineSimulation({ sim }: { sim: PipelineSim }) {
  return (
    <section aria-labelledby="sim-h" class="simulation">
      <h2 id="sim-h">Backend-pipeline simulation</h2>
      <p>{sim.channel.note}</p>
      {sim.webhook && (
        <>
          <h3>1. Webhook (simulated, not sent): {sim.webhook.event}</h3>
          {sim.webhook.endpoints.length === 0 ? (
            <p>No endpoint of this project receives {sim.webhook.event}; nothing would be sent.</p>
          ) : (
            sim.webhook.endpoints.map((e) => (
              <div key={e.url}>
                <p>To {e.url}, with the headers:</p>
                <Fields rows={Object.entries(e.headers)} />
              </div>
            ))
          )}
          <p>Payload (webhook-id {sim.webhook.webhook_id}):</p>
          <pre class="body sim-payload">{pretty(sim.webhook.payload)}</pre>
        </>
      )}
      {sim.backend && (
        <>
          <h3>2. Backend (simulated): calls back after {sim.backend.waited_ms} ms</h3>
          <pre class="body sim-backend">
            {JSON.stringify(
              { data: sim.backend.data, task_id: sim.backend.task_id, metadata: sim.backend.metadata },
              null,
              2,
            )}
          </pre>
        </>
      )}
      {sim.response && (
        <>
          <h3>3. WebSocket {sim.response.event} event</h3>
          <p>
            On the channel {sim.response.topic}: the backend's data merged over the AI's, as a real callback
            merges it.
          </p>
          <pre class="body sim-response">{JSON.stringify(sim.response.payload, null, 2)}</pre>
        </>
      )}
    </section>
  );
}
