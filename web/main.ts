/**
 * The play client served at /play: one page, its screens swapped in place. It resumes the
 * tab's session on reload: in the game when a character is bound, else at the character pick.
 */
import { api, call, saveSession, session, whenSessionLost } from './api.ts';
import { authScreen } from './auth.ts';
import { h } from './dom.ts';
import { gameScreen } from './game.ts';
import { lobbyScreen } from './lobby.ts';
import type { Nav, Screen } from './nav.ts';

const root = document.getElementById('app')!;
let current: Screen | null = null;

function show(screen: Screen): void {
  current?.dispose?.();
  current = screen;
  root.replaceChildren(screen.element);
  screen.focus.focus();
}

function endedScreen(detail: string): Screen {
  const again = h('button', { class: 'primary', text: 'Log in again', attrs: { type: 'button' }, onClick: () => nav.auth() });
  const heading = h('h1', { text: 'Session ended', attrs: { tabindex: '-1' } });
  return { element: h('main', { class: 'auth' }, h('section', { class: 'card auth-card ended', attrs: { role: 'alert' } }, heading, h('p', { text: detail }), again)), focus: again };
}

const nav: Nav = {
  auth: (notice) => show(authScreen(nav, notice)),
  lobby: () => {
    const active = session();
    if (!active) return nav.auth();
    const unbound = { ...active, character: undefined };
    saveSession(unbound);
    show(lobbyScreen(nav, unbound));
  },
  game: () => {
    const active = session();
    if (!active?.character) return nav.lobby();
    show(gameScreen(nav, active));
  },
  ended: (detail) => {
    saveSession(null);
    if (current?.end) current.end(detail);
    else show(endedScreen(detail));
  },
  release: () => {
    current?.dispose?.();
    current = null;
  },
};

// Unless the page already knows (the stream's `end` event tells why, and comes first).
whenSessionLost((detail) => {
  if (session()) nav.ended(detail);
});

const stored = session();
if (!stored) nav.auth();
else if (!stored.character) nav.lobby();
else {
  // The session may have ended while the page was closed; a server that is away is waited for.
  const status = await call(api.GET('/status/{session_id}', { params: { path: { session_id: stored.id } } }));
  if (status.ok || status.status === 0) nav.game();
  else if (status.status === 409) nav.lobby();
  else if (status.status !== 401) nav.auth(status.detail);
}
