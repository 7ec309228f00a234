import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, apiStream, type Session } from '../api.ts';
import { type Attempt, Attempts } from '../attempts.tsx';
import { Compare } from '../compare.tsx';
import { useLoad } from '../load.ts';
import { type PipelineSim, PipelineSimulation } from '../pipeline-sim.tsx';
import { TEXT_LABEL, takesSystem, typedBody } from '../request-types.ts';
import { href, type Route, replaceRoute } from '../route.ts';
import { SNIPPETS, type SnippetInput } from '../snippets.ts';
import { Badge, Fields, Heading, Pending, text } from '../ui.tsx';
import type { LogEntry } from './Logs.tsx';
import { type WorkflowView, workflowsPath } from './Workflows.tsx';

/** What POST console/api/playground answers: the native wrapped body, and what the page shows beside it. */
interface Answer {
  data: unknown;
  error?: { message: string; details: { status: number; message: string } };
  meta: {
    status: string;
    http_status: number;
    workflow: string | null;
    used_provider: string | null;
    used_model: string | null;
    duration_ms: number;
    usage: Record<string, number>;
    structured_output: boolean;
    attempts: Attempt[];
    session_id?: string;
    cache?: string;
    request_log_id: string;
  };
  playground: { cost_usd: string | null; ttft_ms: number | null };
  /** A streamed answer's text, put together from its chunks. */
  streamed?: string;
}

/** Longest text carried into the playground's URL from a log entry (a URL is no place for a book). */
const MAX_CARRIED = 2000;

/** "Open in playground" from a request-log entry: its workflow, and its messages when bodies are stored. */
export function playgroundHref(e: LogEntry): string {
  type Part = { type?: unknown; text?: unknown; image_url?: { url?: unknown } };
  const req = (
    e.bodies as
      | {
          request?: { messages?: { role?: unknown; content?: unknown }[]; prompt?: unknown; input?: unknown };
        }
      | undefined
  )?.request;
  // A message's text: a string, or the text parts of a vision message.
  const textOf = (c: unknown): string | undefined =>
    typeof c === 'string'
      ? c
      : Array.isArray(c)
        ? (c as Part[])
            .filter((p) => p.type === 'text' && typeof p.text === 'string')
            .map((p) => p.text as string)
            .join('\n')
        : undefined;
  const said = (role: string) =>
    req?.messages
      ?.filter((m) => m.role === role)
      .map((m) => textOf(m.content))
      .filter((t) => t !== undefined)
      .join('\n')
      .slice(0, MAX_CARRIED) || undefined;
  // Completion, image, embedding and speech requests carry their text as prompt or input.
  const plain = [req?.prompt, req?.input].find((v) => typeof v === 'string') as string | undefined;
  const image = req?.messages
    ?.flatMap((m) => (Array.isArray(m.content) ? (m.content as Part[]) : []))
    .find((p) => p.type === 'image_url' && typeof p.image_url?.url === 'string')?.image_url?.url as
    | string
    | undefined;
  return href(['playground'], {
    workflow: e.workflow ?? undefined,
    system: said('system'),
    user: said('user') ?? plain?.slice(0, MAX_CARRIED),
    image_url: image && image.length <= MAX_CARRIED ? image : undefined,
  });
}

/** A stream's error event's message. */
const errorMessage = (error: unknown): string =>
  String((error as { message?: unknown } | null)?.message ?? 'unknown error');

/** The answer's text: a chat completion's content, otherwise the data as JSON. */
function answerText(data: unknown): string {
  const choice = (data as { choices?: { message?: { content?: unknown } }[] } | null)?.choices?.[0];
  if (typeof choice?.message?.content === 'string') return choice.message.content;
  return JSON.stringify(data, null, 2);
}

/** Where structured output failed its schema: the path each refused attempt names. */
const SCHEMA_FAILURE = /does not match the schema: (\S+) (.*)$/;
function schemaFailures(attempts: Attempt[]): string[] {
  return attempts.flatMap((a) => {
    const m = a.reason && SCHEMA_FAILURE.exec(a.reason.message);
    return m ? [`${a.provider}/${a.model}: ${m[1]} ${m[2]}`] : [];
  });
}

function Result({ answer }: { answer: Answer }) {
  const m = answer.meta;
  const failures = schemaFailures(m.attempts);
  return (
    <section aria-labelledby="answer-h">
      <h2 id="answer-h">
        Answer <Badge value={m.status} />
      </h2>
      {answer.error ? (
        <p class="error">{answer.error.message}</p>
      ) : (
        <pre class="body answer">{answer.streamed ?? answerText(answer.data)}</pre>
      )}
      {m.structured_output && (
        <p class="schema">
          {m.status === 'success'
            ? "Structured output: valid against the workflow's schema (checked by the gateway)."
            : "Structured output: no slot's answer matched the workflow's schema."}
        </p>
      )}
      {failures.length > 0 && (
        <>
          <h3>Failing schema paths</h3>
          <ul class="schema-failures">
            {failures.map((f, i) => (
              <li key={`f${i}`}>{f}</li>
            ))}
          </ul>
        </>
      )}
      <h3>Attempts</h3>
      <Attempts attempts={m.attempts} />
      <h3>Meta</h3>
      <Fields
        rows={[
          ['used', m.used_provider ? `${m.used_provider} / ${text(m.used_model)}` : null],
          ['duration_ms', m.duration_ms],
          [answer.streamed === undefined ? 'ttft_ms' : 'ttft_ms (this browser)', answer.playground.ttft_ms],
          ['usage', m.usage],
          [
            'cost_usd',
            answer.streamed === undefined ? answer.playground.cost_usd : 'streamed: in the request log',
          ],
          ['cache', m.cache ?? 'not used'],
          ['session_id', m.session_id],
          ['request_log_id', m.request_log_id],
        ]}
      />
      <p>
        <a href={href(['logs'], { workflow: m.workflow ?? undefined })}>Request logs of this workflow</a>
      </p>
    </section>
  );
}

function CopyAsCode({ input }: { input: SnippetInput }) {
  const [id, setId] = useState(SNIPPETS[0]!.id);
  const [note, setNote] = useState('');
  const snippet = SNIPPETS.find((s) => s.id === id) ?? SNIPPETS[0]!;
  const code = snippet.code(input);
  const copy = () =>
    navigator.clipboard.writeText(code).then(
      () => setNote('Copied.'),
      () => setNote('This browser refused the clipboard; select the code to copy it.'),
    );
  return (
    <section aria-labelledby="code-h">
      <h2 id="code-h">Copy as code</h2>
      <div class="row">
        <label>
          Language{' '}
          <select value={id} onChange={(e) => setId((e.target as HTMLSelectElement).value)}>
            {SNIPPETS.map((s) => (
              <option key={s.id} value={s.id}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" onClick={copy}>
          Copy
        </button>
        <span aria-live="polite">{note}</span>
      </div>
      <pre class="body code">{code}</pre>
    </section>
  );
}

export function Playground({ session, route }: { session: Session; route: Route }) {
  const q = route.query;
  const workflow = q.get('workflow') ?? '';
  const list = useLoad('list', () => api<{ data: WorkflowView[] }>(workflowsPath(session)));
  const [system, setSystem] = useState(q.get('system') ?? '');
  const [user, setUser] = useState(q.get('user') ?? '');
  const [stream, setStream] = useState(false);
  const [live, setLive] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const [answer, setAnswer] = useState<Answer | undefined>();
  const [sim, setSim] = useState<PipelineSim | undefined>();
  const [error, setError] = useState('');
  // Another workflow's answer is not this one's.
  useEffect(() => {
    setAnswer(undefined);
    setSim(undefined);
    setError('');
  }, [workflow]);

  const choose = (name: string) => replaceRoute(href(['playground'], { workflow: name || undefined }));
  const [imageUrl, setImageUrl] = useState(q.get('image_url') ?? '');
  const chosen = () => (list.state === 'done' ? list.data.data.find((w) => w.name === workflow) : undefined);
  const type = chosen()?.request_type ?? 'chat';
  const inputOf = () => typedBody(type, { system, user, imageUrl });
  const eventName = (w?: WorkflowView) => (typeof w?.event_name === 'string' ? w.event_name : undefined);
  const pipelineOf = () =>
    list.state === 'done' ? eventName(list.data.data.find((w) => w.name === workflow)) : undefined;
  const send = (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError('');
    setSim(undefined);
    const body = { workflow, ...inputOf(), ...(stream ? { stream: true } : {}) };
    const sent = pipelineOf()
      ? simulated({ workflow, ...inputOf() })
      : stream
        ? streamed(body)
        : api<Answer>('console/api/playground', { method: 'POST', body });
    sent
      .then(setAnswer, (err: Error) => {
        setAnswer(undefined);
        setError(err instanceof ApiError ? `${err.message} (${err.code})` : err.message);
      })
      .finally(() => {
        setBusy(false);
        setLive(undefined);
      });
  };

  /** A backend-pipeline workflow: the AI step for real, then the simulated webhook, backend and merge. */
  const simulated = async (body: unknown): Promise<Answer> => {
    setAnswer(undefined);
    const r = await api<
      PipelineSim & { ai_response: Omit<Answer, 'playground'>; playground: Answer['playground'] }
    >('console/api/playground/pipeline', { method: 'POST', body });
    setSim(r);
    return { ...r.ai_response, playground: r.playground };
  };

  /** Sends as a stream, showing the text as it arrives; the answer is complete with its `meta` event. */
  const streamed = async (body: unknown): Promise<Answer> => {
    const started = performance.now();
    let text = '';
    let ttft: number | null = null;
    let meta: Answer['meta'] | undefined;
    let failure: string | undefined;
    setAnswer(undefined);
    setLive('');
    const json = await apiStream('console/api/playground', body, (ev) => {
      const d = ev.data as Record<string, unknown>;
      if (ev.event === 'meta') meta = d as unknown as Answer['meta'];
      else if (ev.event === 'error') failure = errorMessage(d.error);
      else if (ev.event === 'message') {
        const delta = (d as { choices?: { delta?: { content?: unknown } }[] }).choices?.[0]?.delta?.content;
        if (typeof delta === 'string' && delta) {
          ttft ??= Math.round(performance.now() - started);
          text += delta;
          setLive(text);
        }
      }
    });
    // Refused, or every slot failed before a stream began: the JSON answer of a send without stream.
    if (json !== undefined) return json as Answer;
    if (failure !== undefined || !meta) throw new Error(`The stream failed: ${failure ?? 'it ended early'}`);
    return { data: null, meta, streamed: text, playground: { cost_usd: null, ttft_ms: ttft } };
  };

  return (
    <main id="main">
      <Heading>Playground</Heading>
      <p>
        Sends a request through the gateway's real pipeline (caps, limits, cache, sessions) with your
        session's key; the request log marks it as from the console.
      </p>
      <Pending loaded={list}>
        {({ data }) => (
          <form class="playground" onSubmit={send} aria-label="Request">
            <label>
              Workflow
              <select
                name="workflow"
                value={workflow}
                onChange={(e) => choose((e.target as HTMLSelectElement).value)}
              >
                <option value="">choose a workflow</option>
                {data.map((w) => (
                  <option key={w.name} value={w.name}>
                    {w.name} ({w.request_type})
                  </option>
                ))}
              </select>
            </label>
            {takesSystem(type) && (
              <label>
                System message
                <textarea
                  name="system"
                  rows={2}
                  value={system}
                  onInput={(e) => setSystem((e.target as HTMLTextAreaElement).value)}
                />
              </label>
            )}
            {type === 'vision' && (
              <label>
                Image URL
                <input
                  name="image_url"
                  type="url"
                  required
                  value={imageUrl}
                  onInput={(e) => setImageUrl((e.target as HTMLInputElement).value)}
                />
              </label>
            )}
            <label>
              {TEXT_LABEL[type] ?? 'User message'}
              <textarea
                name="user"
                rows={4}
                required
                value={user}
                onInput={(e) => setUser((e.target as HTMLTextAreaElement).value)}
              />
            </label>
            <div class="row">
              <label class="inline">
                <input
                  type="checkbox"
                  name="stream"
                  checked={stream}
                  onChange={(e) => setStream((e.target as HTMLInputElement).checked)}
                />
                Stream the answer
              </label>
              {pipelineOf() && (
                <span class="reason">
                  Backend pipeline (event {pipelineOf()}): the AI step runs, the webhook and the backend
                  (about 1.5 s) are simulated.
                </span>
              )}
              <button type="submit" disabled={busy || !workflow}>
                Send
              </button>
              {busy && <span aria-live="polite">Sending…</span>}
            </div>
          </form>
        )}
      </Pending>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
      {live !== undefined && <pre class="body answer live">{live}</pre>}
      {answer && <Result answer={answer} />}
      {sim && <PipelineSimulation sim={sim} />}
      {workflow && list.state === 'done' && !pipelineOf() && (
        <Compare route={route} list={list.data.data} body={inputOf} />
      )}
      {workflow && <CopyAsCode input={{ workflow, system: system.trim() ? system : '', user }} />}
    </main>
  );
}
