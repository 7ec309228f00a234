import { api } from '../api.ts';
import { Choice, FilterForm, queryOf, valuesOf } from '../filters.tsx';
import { useLoad } from '../load.ts';
import type { Route } from '../route.ts';
import { Badge, Heading, Pending, text } from '../ui.tsx';

interface KeyView {
  key_id: string;
  resource: { kind: string; namespace: string; name: string };
  scopes: string[];
  fingerprint: string;
  expires_at: string | null;
  rotation: { state: string; previous: { fingerprint: string; valid_until: string | null }[] };
  rate_limit: { requestsPerMinute?: number; tokensPerMinute?: number } | null;
}

const FILTERS = ['scope', 'state'] as const;

const rate = (r: KeyView['rate_limit']): string =>
  !r
    ? 'none'
    : [
        r.requestsPerMinute !== undefined && `${r.requestsPerMinute} req/min`,
        r.tokensPerMinute !== undefined && `${r.tokensPerMinute} tokens/min`,
      ]
        .filter(Boolean)
        .join(', ');

export function Keys({ route }: { route: Route }) {
  const query = queryOf(route, FILTERS);
  const loaded = useLoad(query, () =>
    api<{ data: KeyView[]; snapshot_version: string | null }>(`console/api/keys?${query}`),
  );
  const f = valuesOf(route, FILTERS);
  return (
    <main id="main">
      <Heading>API keys</Heading>
      <p>
        Keys are declared as ApiKey resources; this is what the gateway serves now. A key is never shown: its
        fingerprint is the start of its SHA-256 (<code>printf %s "$KEY" | sha256sum</code>).
      </p>
      <FilterForm page="keys" names={FILTERS}>
        <Choice label="Scope" name="scope" value={f.scope} options={['ai', 'console', 'mcp']} />
        <Choice label="Rotation" name="state" value={f.state} options={['active', 'rotating']} />
      </FilterForm>
      <Pending loaded={loaded}>
        {(v) =>
          v.data.length === 0 ? (
            <p>No key matches.</p>
          ) : (
            <table>
              <caption>Served in snapshot {text(v.snapshot_version)}</caption>
              <thead>
                <tr>
                  <th scope="col">Declared by</th>
                  <th scope="col">Scopes</th>
                  <th scope="col">Fingerprint</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Rotation</th>
                  <th scope="col">Rate limit</th>
                </tr>
              </thead>
              <tbody>
                {v.data.map((k) => (
                  <tr key={k.key_id}>
                    <td>
                      {k.resource.kind} {k.key_id}
                    </td>
                    <td>{k.scopes.join(', ')}</td>
                    <td>
                      <code>{k.fingerprint}</code>
                    </td>
                    <td>{k.expires_at ?? 'never'}</td>
                    <td>
                      <Badge value={k.rotation.state} />
                      {k.rotation.previous.map((p) => (
                        <div key={p.fingerprint} class="reason">
                          previous <code>{p.fingerprint}</code> valid until {text(p.valid_until)}
                        </div>
                      ))}
                    </td>
                    <td>{rate(k.rate_limit)}</td>
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
