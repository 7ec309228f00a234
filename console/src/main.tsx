import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { loadSession, type Session, signIn, signOut } from './api.ts';
import { Analytics } from './pages/Analytics.tsx';
import { Cluster } from './pages/Cluster.tsx';
import { Keys } from './pages/Keys.tsx';
import { Limits } from './pages/Limits.tsx';
import { LogEntryPage } from './pages/LogEntry.tsx';
import { Logs } from './pages/Logs.tsx';
import { Playground } from './pages/Playground.tsx';
import { SignIn } from './pages/SignIn.tsx';
import { Webhooks } from './pages/Webhooks.tsx';
import { WorkflowForm } from './pages/WorkflowForm.tsx';
import { WorkflowDetail, Workflows } from './pages/Workflows.tsx';
import { href, type Route, replaceRoute, useRoute } from './route.ts';
import { ThemeToggle } from './theme.tsx';

function Page({ route, session }: { route: Route; session: Session }) {
  const [section, id] = route.path;
  if (section === 'workflows' && id === 'new') return <WorkflowForm key="new" session={session} />;
  if (section === 'workflows' && id && route.path[2] === 'edit')
    return <WorkflowForm key={`edit-${id}`} session={session} name={id} />;
  if (section === 'workflows' && id) return <WorkflowDetail key={id} session={session} name={id} />;
  if (section === 'logs' && id) return <LogEntryPage key={id} id={id} t={route.query.get('t')} />;
  if (section === 'logs') return <Logs route={route} />;
  if (section === 'playground') return <Playground session={session} route={route} />;
  if (section === 'analytics') return <Analytics route={route} />;
  if (section === 'limits') return <Limits route={route} />;
  if (section === 'webhooks') return <Webhooks route={route} />;
  if (section === 'keys') return <Keys route={route} />;
  return <Workflows session={session} />;
}

/** The console's pages, in the order of the navigation. */
const SECTIONS = [
  ['workflows', 'Workflows'],
  ['logs', 'Request logs'],
  ['analytics', 'Analytics'],
  ['limits', 'Spend and limits'],
  ['webhooks', 'Webhooks'],
  ['keys', 'API keys'],
  ['playground', 'Playground'],
] as const;

function App() {
  const route = useRoute();
  const [session, setSession] = useState<Session | null | undefined>(undefined);
  const [notice, setNotice] = useState<string | undefined>();

  useEffect(() => {
    const [section, token] = route.path;
    if (section === 'link' && token) {
      // The link is spent on first use: take it out of the address bar and the history at once.
      replaceRoute(href(['workflows']));
      signIn({ link: token }).then(setSession, (err: Error) => {
        setNotice(err.message);
        setSession(null);
      });
      return;
    }
    loadSession().then(setSession, () => setSession(null));
  }, []);

  if (session === undefined) return <p aria-live="polite">Loading…</p>;
  // Kubernetes identities have their own sign-in and pages (pages/Cluster.tsx).
  if (route.path[0] === 'cluster')
    return (
      <>
        <header>
          <span class="brand">Switchyard</span>
          <span class="spacer" />
          <ThemeToggle />
        </header>
        <Cluster route={route} />
      </>
    );
  const section = route.path[0] ?? 'workflows';
  return (
    <>
      <button type="button" class="skip" onClick={skipToMain}>
        Skip to content
      </button>
      <header>
        <span class="brand">Switchyard</span>
        {session && (
          <nav aria-label="Console">
            {SECTIONS.map(([id, name]) => (
              <a key={id} href={href([id])} aria-current={section === id ? 'page' : undefined}>
                {name}
              </a>
            ))}
          </nav>
        )}
        <span class="spacer" />
        {session && <span class="who">{session.project_id}</span>}
        <ThemeToggle />
        {session && (
          <button type="button" onClick={() => signOut().finally(() => setSession(null))}>
            Sign out
          </button>
        )}
      </header>
      {session ? (
        <Page route={route} session={session} />
      ) : (
        <SignIn onSignedIn={setSession} notice={notice} />
      )}
    </>
  );
}

/** The skip link moves focus, not the hash (the hash is the router's). */
function skipToMain() {
  document.querySelector<HTMLElement>('#main h1')?.focus();
}

render(<App />, document.getElementById('app')!);
