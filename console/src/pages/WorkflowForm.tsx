import { useEffect, useState } from 'preact/hooks';
import { ApiError, api, type Session } from '../api.ts';
import { href } from '../route.ts';
import { Heading } from '../ui.tsx';
import { toYaml } from '../yaml.ts';
import { backupsOf, type WorkflowView, workflowsPath } from './Workflows.tsx';

const REQUEST_TYPES = ['chat', 'completion', 'vision', 'embedding', 'image', 'audio'];
/** Spec fields written as JSON objects in the form. */
const JSON_FIELDS = ['structuredOutput', 'sessionMemory', 'responseCache', 'hostedTools'] as const;
type JsonField = (typeof JSON_FIELDS)[number];
const JSON_HINTS: Record<JsonField, string> = {
  structuredOutput: 'For example {"schema": {"type": "object", "required": ["summary"]}}.',
  sessionMemory: 'For example {"enabled": true, "ttlSeconds": 86400}.',
  responseCache: 'For example {"ttlSeconds": 300}.',
  hostedTools: 'What happens to hosted tools in Responses requests.',
};
const JSON_LABELS: Record<JsonField, string> = {
  structuredOutput: 'Structured output (JSON)',
  sessionMemory: 'Session memory (JSON)',
  responseCache: 'Response cache (JSON)',
  hostedTools: 'Hosted tools (JSON)',
};

interface Draft {
  name: string;
  description: string;
  request_type: string;
  provider: string;
  model: string;
  backups: { provider: string; model: string }[];
  event_name: string;
  systemInstructions: string;
  cacheFields: string;
  testMode: boolean;
  json: Record<JsonField, string>;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const pretty = (v: unknown): string => (v === undefined ? '' : JSON.stringify(v, null, 2));

function draftOf(w: WorkflowView | undefined): Draft {
  return {
    name: w?.name ?? '',
    description: str(w?.description),
    request_type: w?.request_type ?? 'chat',
    provider: w?.provider ?? '',
    model: w?.model ?? '',
    backups: w ? backupsOf(w) : [],
    event_name: str(w?.event_name),
    systemInstructions: str(w?.systemInstructions),
    cacheFields: Array.isArray(w?.cacheFields) ? (w.cacheFields as string[]).join('\n') : '',
    testMode: w?.testMode === true,
    json: Object.fromEntries(JSON_FIELDS.map((f) => [f, pretty(w?.[f])])) as Record<JsonField, string>,
  };
}

/** The console API's body for a draft, or the fields whose JSON does not parse. */
function bodyOf(d: Draft): { body: Record<string, unknown>; errors: Record<string, string> } {
  const errors: Record<string, string> = {};
  const body: Record<string, unknown> = {
    name: d.name,
    provider: d.provider,
    model: d.model,
    request_type: d.request_type,
  };
  if (d.description) body.description = d.description;
  if (d.backups.length) body.backups = d.backups;
  if (d.event_name) body.event_name = d.event_name;
  if (d.systemInstructions) body.systemInstructions = d.systemInstructions;
  const cache = d.cacheFields
    .split(/[\n,]/)
    .map((s) => s.trim())
    .filter(Boolean);
  if (cache.length) body.cacheFields = cache;
  if (d.testMode) body.testMode = true;
  for (const f of JSON_FIELDS) {
    if (!d.json[f].trim()) continue;
    try {
      const v: unknown = JSON.parse(d.json[f]);
      if (typeof v !== 'object' || v === null || Array.isArray(v)) errors[f] = 'must be a JSON object';
      else body[f] = v;
    } catch (err) {
      errors[f] = `not JSON: ${(err as Error).message}`;
    }
  }
  return { body, errors };
}

/** The form field an API error's `param` names: `backups[0].provider` and `backup_1_provider` alike. */
export function fieldOfParam(param: string): string {
  const flat = /^backup_(\d+)_(provider|model)$/.exec(param);
  if (flat) return `backup-${Number(flat[1]) - 1}-${flat[2]}`;
  const nested = /^backups\[(\d+)\]\.(provider|model)/.exec(param);
  if (nested) return `backup-${nested[1]}-${nested[2]}`;
  return param.split(/[.[]/)[0] ?? param;
}

/** The Workflow object the form describes, as YAML to read, export or commit. */
function manifestOf(
  d: Draft,
  body: Record<string, unknown>,
  w: WorkflowView | undefined,
  session: Session,
): string {
  const [ns, project] = [
    session.project_id.slice(0, session.project_id.indexOf('.')),
    session.project_id.slice(session.project_id.indexOf('.') + 1),
  ];
  const { name, request_type, event_name, ...rest } = body;
  return toYaml({
    apiVersion: 'switchyard.dev/v1alpha1',
    kind: 'Workflow',
    metadata: { name: w?.resource.name ?? `${project}-${d.name}`, namespace: w?.resource.namespace ?? ns },
    spec: {
      projectRef: { name: project },
      name,
      requestType: request_type,
      ...(event_name ? { eventName: event_name } : {}),
      ...rest,
    },
  });
}

function Field(p: {
  id: string;
  label: string;
  error?: string | undefined;
  hint?: string;
  children: (a: Record<string, unknown>) => unknown;
}) {
  const a = {
    id: p.id,
    'aria-invalid': p.error ? 'true' : undefined,
    'aria-describedby': p.error ? `${p.id}-error` : p.hint ? `${p.id}-hint` : undefined,
  };
  return (
    <div class="field">
      <label for={p.id}>{p.label}</label>
      {p.children(a) as preact.ComponentChildren}
      {p.hint && !p.error && <small id={`${p.id}-hint`}>{p.hint}</small>}
      {p.error && (
        <small id={`${p.id}-error`} class="error">
          {p.error}
        </small>
      )}
    </div>
  );
}

export function WorkflowForm({ session, name }: { session: Session; name?: string | undefined }) {
  const [current, setCurrent] = useState<WorkflowView | undefined>();
  const [d, setD] = useState<Draft>(draftOf(undefined));
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [summary, setSummary] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!name) return;
    api<WorkflowView>(`${workflowsPath(session)}/${encodeURIComponent(name)}`).then(
      (w) => {
        setCurrent(w);
        setD(draftOf(w));
      },
      (err: Error) => setSummary(err.message),
    );
  }, [name]);
  const set = (patch: Partial<Draft>) => setD({ ...d, ...patch });
  const { body, errors: jsonErrors } = bodyOf(d);
  const yaml = manifestOf(d, body, current, session);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (Object.keys(jsonErrors).length) {
      setErrors(jsonErrors);
      setSummary('Some fields are not valid JSON.');
      return;
    }
    setBusy(true);
    try {
      const path = name ? `${workflowsPath(session)}/${encodeURIComponent(name)}` : workflowsPath(session);
      await api(path, { method: name ? 'PUT' : 'POST', body: name ? { ...body, name } : body });
      window.location.hash = href(['workflows', d.name]);
    } catch (err) {
      const param = err instanceof ApiError ? err.param : undefined;
      setErrors(param ? { [fieldOfParam(param)]: (err as Error).message } : {});
      setSummary((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  const download = () => {
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([yaml], { type: 'application/yaml' }));
    a.download = `workflow-${d.name || 'new'}.yaml`;
    a.click();
    URL.revokeObjectURL(a.href);
  };

  const input = (id: keyof Draft & string, label: string, hint?: string) => (
    <Field id={id} label={label} error={errors[id]} hint={hint}>
      {(a) => (
        <input
          {...a}
          value={d[id] as string}
          disabled={id === 'name' && Boolean(name)}
          onInput={(e) => set({ [id]: e.currentTarget.value })}
        />
      )}
    </Field>
  );

  return (
    <main id="main">
      <p>
        <a href={href(['workflows', ...(name ? [name] : [])])}>← {name ? `Workflow ${name}` : 'Workflows'}</a>
      </p>
      <Heading>{name ? `Edit workflow ${name}` : 'New workflow'}</Heading>
      {summary && (
        <p role="alert" class="error">
          {summary}
        </p>
      )}
      <form class="workflow-form" onSubmit={submit} noValidate>
        {input('name', 'Name', 'The name clients send as workflow or model.')}
        <Field id="description" label="Description" error={errors.description}>
          {(a) => (
            <textarea
              {...a}
              rows={2}
              value={d.description}
              onInput={(e) => set({ description: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field id="request_type" label="Request type" error={errors.request_type}>
          {(a) => (
            <select
              {...a}
              value={d.request_type}
              onChange={(e) => set({ request_type: e.currentTarget.value })}
            >
              {REQUEST_TYPES.map((t) => (
                <option key={t}>{t}</option>
              ))}
            </select>
          )}
        </Field>
        {input('provider', 'Primary provider')}
        {input('model', 'Primary model')}
        <fieldset>
          <legend>Backups, tried in order</legend>
          {d.backups.map((b, i) => (
            <div class="backup" key={`b${i}`}>
              {(['provider', 'model'] as const).map((k) => (
                <Field
                  key={k}
                  id={`backup-${i}-${k}`}
                  label={`Backup ${i + 1} ${k}`}
                  error={errors[`backup-${i}-${k}`]}
                >
                  {(a) => (
                    <input
                      {...a}
                      value={b[k]}
                      onInput={(e) =>
                        set({
                          backups: d.backups.map((x, j) =>
                            j === i ? { ...x, [k]: e.currentTarget.value } : x,
                          ),
                        })
                      }
                    />
                  )}
                </Field>
              ))}
              <button type="button" onClick={() => set({ backups: d.backups.filter((_, j) => j !== i) })}>
                Remove backup {i + 1}
              </button>
            </div>
          ))}
          <button type="button" onClick={() => set({ backups: [...d.backups, { provider: '', model: '' }] })}>
            Add backup
          </button>
        </fieldset>
        <Field id="systemInstructions" label="System instructions" error={errors.systemInstructions}>
          {(a) => (
            <textarea
              {...a}
              rows={4}
              value={d.systemInstructions}
              onInput={(e) => set({ systemInstructions: e.currentTarget.value })}
            />
          )}
        </Field>
        <Field
          id="cacheFields"
          label="Cache fields"
          error={errors.cacheFields}
          hint="One request path a line, e.g. metadata.customer_id."
        >
          {(a) => (
            <textarea
              {...a}
              rows={2}
              value={d.cacheFields}
              onInput={(e) => set({ cacheFields: e.currentTarget.value })}
            />
          )}
        </Field>
        {input(
          'event_name',
          'Event name',
          'Set: a backend-pipeline workflow (async only, results await a callback).',
        )}
        {JSON_FIELDS.map((f) => (
          <Field key={f} id={f} label={JSON_LABELS[f]} error={errors[f]} hint={JSON_HINTS[f]}>
            {(a) => (
              <textarea
                {...a}
                rows={3}
                class="code"
                value={d.json[f]}
                onInput={(e) => set({ json: { ...d.json, [f]: e.currentTarget.value } })}
              />
            )}
          </Field>
        ))}
        <div class="field">
          <label>
            <input
              type="checkbox"
              checked={d.testMode}
              onChange={(e) => set({ testMode: e.currentTarget.checked })}
            />{' '}
            Test mode
          </label>
        </div>
        <p class="hint">Spend caps are SpendCap objects beside the workflow: see Spend and limits.</p>
        <button type="submit" disabled={busy}>
          {name ? 'Save' : 'Create'}
        </button>
      </form>
      <h2>YAML</h2>
      <pre class="yaml">{yaml}</pre>
      <button type="button" onClick={download}>
        Download YAML
      </button>
    </main>
  );
}
