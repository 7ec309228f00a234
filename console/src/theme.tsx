import { useEffect, useState } from 'preact/hooks';

type Theme = 'system' | 'light' | 'dark';
const KEY = 'switchyard-console-theme';
const NEXT: Record<Theme, Theme> = { system: 'dark', dark: 'light', light: 'system' };

const stored = (): Theme => {
  const t = window.localStorage.getItem(KEY);
  return t === 'light' || t === 'dark' ? t : 'system';
};

/** Follows the system's colour scheme until the user picks one; the pick is kept in this browser. */
export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(stored);
  useEffect(() => {
    const root = document.documentElement;
    if (theme === 'system') {
      root.removeAttribute('data-theme');
      window.localStorage.removeItem(KEY);
    } else {
      root.setAttribute('data-theme', theme);
      window.localStorage.setItem(KEY, theme);
    }
  }, [theme]);
  return (
    <button type="button" class="theme" onClick={() => setTheme(NEXT[theme])} aria-label={`Theme: ${theme}`}>
      Theme: {theme}
    </button>
  );
}
