import { api, type Session } from '../api.ts';
import { useLoad } from '../load.ts';
import { href } from '../route.ts';
import { Badge, Fields, Heading, Pending, text } from '../ui.tsx';

export interface WorkflowView {
  name: string;
  provider: string;
  model: string;
  request_type: string;
  description?: string;
  ready: { status: string; reason: string; message: string; observed_generation?: number };
  managed_by_console: boolean;
  resource: { namespace: string; name: string; generation?: number; resource_version?: string };
  [field: string]: unknown;
}

/** The console API's workflows of the signed-in project. */
export const workflowsPath = (s: Session) =>
  `api/console/projects/${encodeURIComponent(s.project_id)}/workflows`;

export function Workflows({ session }: { session: Session }) {
  const loaded = useLoad('list', () => api<{ data: WorkflowView[] }>(workflowsPath(session)));
  return (
    <main id="main">
      <Heading>Workflows</Heading>
      <p>
        <a href={href(['workflows', 'new'])}>New workflow</a>
      </p>
      <Pending loaded={loaded}>
        {({ data }) =>
          data.length === 0 ? (
            <p>This project has no workflows yet.</p>
          ) : (
            <table>
              <caption>Workflows of project {session.project_id}</caption>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Type</th>
                  <th scope="col">Primary</th>
                  <th scope="col">Backups</th>
                  <th scope="col">Ready</th>
                  <th scope="col">Description</th>
                </tr>
              </thead>
              <tbody>
                {data.map((w) => (
                  <tr key={w.name}>
                    <td>
                      <a href={href(['workflows', w.name])}>{w.name}</a>
                    </td>
                    <td>{w.request_type}</td>
                    <td>
                      {w.provider} / {w.model}
                    </td>
                    <td>{backupsOf(w).length}</td>
                    <td>
                      <Badge value={w.ready.status === 'True' ? 'ready' : 'not_ready'} />
                    </td>
                    <td class="clip">{text(w.description)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Pending>
    </main>
  );
}

/** The flat `backup_N_provider` / `backup_N_model` fields back into slots. */
export function backupsOf(w: WorkflowView): { provider: string; model: string }[] {
  const out: { provider: string; model: string }[] = [];
  for (let i = 1; `backup_${i}_provider` in w; i++)
    out.push({ provider: text(w[`backup_${i}_provider`]), model: text(w[`backup_${i}_model`]) });
  return out;
}

const SHOWN =
  /^(object|project_id|name|provider|model|request_type|backup_\d+_(provider|model)|ready|resource|managed_by_console)$/;

export function WorkflowDetail({ session, name }: { session: Session; name: string }) {
  const loaded = useLoad(name, () =>
    api<WorkflowView>(`${workflowsPath(session)}/${encodeURIComponent(name)}`),
  );
  return (
    <main id="main">
      <p>
        <a href={href(['workflows'])}>← Workflows</a>
      </p>
      <Heading>Workflow {name}</Heading>
      <Pending loaded={loaded}>
        {(w) => (
          <>
            <p>
              <a href={href(['playground'], { workflow: name })}>Try in playground</a>
              {' · '}
              <a href={href(['workflows', name, 'edit'])}>Edit</a>
            </p>
            <h2>Slots</h2>
            <table>
              <thead>
                <tr>
                  <th scope="col">Slot</th>
                  <th scope="col">Provider</th>
                  <th scope="col">Model</th>
                </tr>
              </thead>
              <tbody>
                <tr>
                  <td>primary</td>
                  <td>{w.provider}</td>
                  <td>{w.model}</td>
                </tr>
                {backupsOf(w).map((b, i) => (
                  <tr key={`b${i}`}>
                    <td>backup {i + 1}</td>
                    <td>{b.provider}</td>
                    <td>{b.model}</td>
                  </tr>
                ))}
              </tbody>
            </table>
            <h2>Declared and served</h2>
            <Fields
              rows={[
                ['object', `${w.resource.namespace}/${w.resource.name}`],
                ['generation (declared)', w.resource.generation],
                ['observed generation (operator)', w.ready.observed_generation],
                ['ready', `${w.ready.status}: ${w.ready.reason}`],
                ['ready message', w.ready.message],
                ['snapshot this gateway serves', session.snapshot_version],
                ['written by the console', w.managed_by_console ? 'yes' : 'no'],
              ]}
            />
            <h2>Fields</h2>
            <Fields
              rows={[['request_type', w.request_type], ...Object.entries(w).filter(([k]) => !SHOWN.test(k))]}
            />
          </>
        )}
      </Pending>
    </main>
  );
}
