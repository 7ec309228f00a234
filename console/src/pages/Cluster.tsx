import { useEffect, useState } from 'preact/hooks';
import { apiUrl } from '../api.ts';
import { href, type Route } from '../route.ts';
import { Heading, text } from '../ui.tsx';

/**
 * The console for Kubernetes identities (`#/cluster`): sign in with a bearer token, the projects
 * the cluster's RBAC lets you read, their workflows with the field managers that own them, and
 * an edit that the gateway server-side applies, or hands back as YAML and a command when another
 * manager owns the fields (docs/console.md, GitOps-safe writes).
 */
interface ClusterSession {
  username: string;
  csrf_token: string;
}
interface Owner {
  manager: string;
  tool?: string;
  fields: string[];
}
interface HandOff {
  message: string;
  owners: Owner[];
  yaml: string;
  command: string;
}
type Answer = { ok: boolean; status: number; body: Record<string, unknown> };

let csrf = '';
async function call(path: string, method = 'GET', body?: unknown): Promise<Answer> {
  const res = await fetch(apiUrl(`console/api/cluster/${path}`), {
    method,
    credentials: 'same-origin',
    headers: {
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(method === 'GET' ? {} : { 'x-csrf-token': csrf }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const data = (await res.json().catch(() => ({}))) as Record<string, unknown>;
  return { ok: res.ok, status: res.status, body: data };
}
const messageOf = (a: Answer) => text(a.body.message ?? `HTTP ${a.status}`);

function TokenSignIn({ onSignedIn }: { onSignedIn: (s: ClusterSession) => void }) {
  const [token, setToken] = useState('');
  const [error, setError] = useState('');
  const submit = async (e: Event) => {
    e.preventDefault();
    const a = await call('session', 'POST', { token: token.trim() });
    setToken('');
    if (!a.ok) return setError(messageOf(a));
    csrf = String(a.body.csrf_token);
    onSignedIn(a.body as unknown as ClusterSession);
  };
  return (
    <main id="main" class="signin">
      <Heading>Sign in with a Kubernetes identity</Heading>
      <p>
        Paste a bearer token the cluster issues (<code>kubectl create token …</code> or your OIDC id token).
        The cluster checks it; this browser keeps only a session cookie.
      </p>
      <form onSubmit={submit}>
        <label for="token">Kubernetes token</label>
        <input
          id="token"
          type="password"
          autocomplete="off"
          required
          value={token}
          onInput={(e) => setToken(e.currentTarget.value)}
        />
        <button type="submit">Sign in</button>
      </form>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </main>
  );
}

function useAnswer(path: string): Answer | undefined {
  const [a, setA] = useState<Answer | undefined>();
  useEffect(() => {
    setA(undefined);
    call(path).then(setA);
  }, [path]);
  return a;
}

function Projects() {
  const a = useAnswer('projects');
  if (!a) return <p aria-live="polite">Loading…</p>;
  const data = (a.body.data ?? []) as { id: string; can_edit: boolean }[];
  return (
    <main id="main">
      <Heading>Projects</Heading>
      {data.length === 0 ? (
        <p>Your identity may not read the workflows of any project.</p>
      ) : (
        <ul>
          {data.map((p) => (
            <li key={p.id}>
              <a href={href(['cluster', p.id])}>{p.id}</a> {p.can_edit ? '(can edit)' : '(read only)'}
            </li>
          ))}
        </ul>
      )}
    </main>
  );
}

const ownersText = (owners: Owner[]) =>
  owners.length
    ? owners.map((o) => `${o.tool ?? o.manager} (${o.manager}): ${o.fields.join(', ')}`).join('; ')
    : 'the console only';

function ProjectWorkflows({ project }: { project: string }) {
  const a = useAnswer(`projects/${encodeURIComponent(project)}/workflows`);
  if (!a) return <p aria-live="polite">Loading…</p>;
  const data = (a.body.data ?? []) as { name: string; provider: string; model: string; owners: Owner[] }[];
  return (
    <main id="main">
      <p>
        <a href={href(['cluster'])}>← Projects</a>
      </p>
      <Heading>Workflows of {project}</Heading>
      {!a.ok && (
        <p role="alert" class="error">
          {messageOf(a)}
        </p>
      )}
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Primary</th>
            <th scope="col">Owned by</th>
          </tr>
        </thead>
        <tbody>
          {data.map((w) => (
            <tr key={w.name}>
              <td>
                <a href={href(['cluster', project, w.name])}>{w.name}</a>
              </td>
              <td>
                {w.provider} / {w.model}
              </td>
              <td>{ownersText(w.owners)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </main>
  );
}

/** The workflow's spec fields as the console API's body (the reference names for two of them). */
function bodyOf(w: Record<string, unknown>, model: string, provider: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(w))
    if (
      !/^(object|project_id|ready|managed_by_console|resource|owners|yaml|backup_\d+_(provider|model))$/.test(
        k,
      )
    )
      out[k] = v;
  const backups = [];
  for (let i = 1; `backup_${i}_provider` in w; i++)
    backups.push({ provider: w[`backup_${i}_provider`], model: w[`backup_${i}_model`] });
  return { ...out, ...(backups.length ? { backups } : {}), provider, model };
}

function EditWorkflow({ project, name }: { project: string; name: string }) {
  const path = `projects/${encodeURIComponent(project)}/workflows/${encodeURIComponent(name)}`;
  const a = useAnswer(path);
  const [provider, setProvider] = useState<string | undefined>();
  const [model, setModel] = useState<string | undefined>();
  const [result, setResult] = useState<{ saved?: string; error?: string; handOff?: HandOff }>({});
  if (!a) return <p aria-live="polite">Loading…</p>;
  const w = a.body;
  const p = provider ?? text(w.provider);
  const m = model ?? text(w.model);
  const save = async (e: Event) => {
    e.preventDefault();
    const r = await call(path, 'PUT', bodyOf(w, m, p));
    if (r.status === 409 && typeof r.body.yaml === 'string')
      setResult({ handOff: r.body as unknown as HandOff });
    else if (!r.ok) setResult({ error: messageOf(r) });
    else setResult({ saved: `Applied by ${text(r.body.field_manager)}.` });
  };
  return (
    <main id="main">
      <p>
        <a href={href(['cluster', project])}>← Workflows of {project}</a>
      </p>
      <Heading>Workflow {name}</Heading>
      <p>Owned by: {ownersText((w.owners ?? []) as Owner[])}</p>
      <form onSubmit={save} class="workflow-form">
        <div class="field">
          <label for="c-provider">Primary provider</label>
          <input id="c-provider" value={p} onInput={(e) => setProvider(e.currentTarget.value)} />
        </div>
        <div class="field">
          <label for="c-model">Primary model</label>
          <input id="c-model" value={m} onInput={(e) => setModel(e.currentTarget.value)} />
        </div>
        <button type="submit">Apply</button>
      </form>
      {result.saved && <p role="status">{result.saved}</p>}
      {result.error && (
        <p role="alert" class="error">
          {result.error}
        </p>
      )}
      {result.handOff && (
        <section aria-labelledby="handoff">
          <h2 id="handoff">Not written: another field manager owns these fields</h2>
          <p role="alert">{result.handOff.message}</p>
          <p>Make the change where it is declared, or apply it yourself:</p>
          <pre class="yaml">{result.handOff.command}</pre>
          <pre class="yaml">{result.handOff.yaml}</pre>
        </section>
      )}
      <h2>YAML</h2>
      <pre class="yaml">{text(w.yaml)}</pre>
    </main>
  );
}

export function Cluster({ route }: { route: Route }) {
  const [session, setSession] = useState<ClusterSession | null | undefined>();
  useEffect(() => {
    call('session').then((a) => {
      if (a.ok) csrf = String(a.body.csrf_token);
      setSession(a.ok ? (a.body as unknown as ClusterSession) : null);
    });
  }, []);
  if (session === undefined) return <p aria-live="polite">Loading…</p>;
  if (!session) return <TokenSignIn onSignedIn={setSession} />;
  const [, project, name] = route.path;
  if (project && name) return <EditWorkflow key={`${project}/${name}`} project={project} name={name} />;
  if (project) return <ProjectWorkflows key={project} project={project} />;
  return <Projects />;
}
