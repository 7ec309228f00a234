import { useState } from 'preact/hooks';
import { type Session, signIn } from '../api.ts';
import { Heading } from '../ui.tsx';

export function SignIn({ onSignedIn, notice }: { onSignedIn: (s: Session) => void; notice?: string }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState(notice ?? '');
  const [busy, setBusy] = useState(false);
  const submit = (e: Event) => {
    e.preventDefault();
    setBusy(true);
    signIn({ key: key.trim() }).then(
      (s) => {
        setKey('');
        onSignedIn(s);
      },
      (err: Error) => {
        setError(err.message);
        setBusy(false);
      },
    );
  };
  return (
    <main id="main" class="signin">
      <Heading>Sign in to the Switchyard console</Heading>
      <p>
        Use an API key with the <code>console</code> scope. It signs you in to the key's project; the key is
        sent once and never kept in this browser.
      </p>
      <form onSubmit={submit}>
        <label for="key">API key</label>
        <input
          id="key"
          name="key"
          type="password"
          autocomplete="off"
          spellcheck={false}
          required
          value={key}
          onInput={(e) => setKey((e.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
      <p>
        On a cluster with Kubernetes sign-in: <a href="#/cluster">sign in with a Kubernetes identity</a>.
      </p>
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </main>
  );
}
