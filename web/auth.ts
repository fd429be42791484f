/** The first screen: log in, create an account, or play at once as a guest. */
import { api, call, saveSession, type Session } from './api.ts';
import { field, form, h } from './dom.ts';
import { loginDetail, readableDetail } from './text.ts';
import type { Nav, Screen } from './nav.ts';

const PASSWORD_HINT = 'At least 12 characters; not a common password, no runs like abc or 123, no character 4 times in a row.';

function input(type: string, autocomplete: string, extra: Record<string, string | boolean> = {}): HTMLInputElement {
  return h('input', { attrs: { type, autocomplete, required: true, ...extra } });
}

/** Logs in and keeps the session; the error text when it fails. */
async function logIn(username: string, password: string): Promise<Session | string> {
  const result = await call(api.POST('/login', { params: { header: { 'X-Client-Type': 'web' } }, body: { username, password } }));
  if (!result.ok) return loginDetail(result.detail);
  const session: Session = { id: result.data.session_id, username, role: result.data.role, worlds: result.data.available_worlds };
  saveSession(session);
  return session;
}

function loginForm(nav: Nav): HTMLFormElement {
  const username = input('text', 'username', { autocapitalize: 'none', spellcheck: 'false' });
  const password = input('password', 'current-password');
  return form([field('Username', username), field('Password', password)], 'Log in', async () => {
    const session = await logIn(username.value.trim(), password.value);
    if (typeof session === 'string') return session;
    nav.lobby();
    return null;
  });
}

function registerForm(nav: Nav): HTMLFormElement {
  const username = input('text', 'username', { autocapitalize: 'none', spellcheck: 'false' });
  const password = input('password', 'new-password');
  const confirm = input('password', 'new-password');
  return form(
    [
      h('p', { class: 'notice', text: 'New accounts last 24 hours, unless an administrator makes yours permanent.' }),
      field('Username', username, '2–20 letters, digits, _ . or -'),
      field('Password', password, PASSWORD_HINT),
      field('Repeat the password', confirm),
    ],
    'Create account',
    async () => {
      const body = { username: username.value.trim(), password: password.value, password_confirm: confirm.value };
      const registered = await call(api.POST('/register', { body }));
      if (!registered.ok) return readableDetail(registered.detail);
      const session = await logIn(body.username, body.password);
      if (typeof session === 'string') return session;
      nav.lobby();
      return null;
    },
  );
}

function guestForm(nav: Nav): HTMLFormElement {
  const name = input('text', 'off', { spellcheck: 'false' });
  const password = input('password', 'new-password');
  const confirm = input('password', 'new-password');
  return form(
    [
      field('Character name', name, 'Letters, spaces, apostrophes and hyphens, e.g. Wren Ashdown.'),
      field('Password', password, PASSWORD_HINT),
      field('Repeat the password', confirm),
    ],
    'Play as guest',
    async () => {
      const body = { character_name: name.value.trim(), password: password.value, password_confirm: confirm.value };
      const guest = await call(api.POST('/register-guest', { body }));
      if (!guest.ok) return readableDetail(guest.detail);
      const session = await logIn(guest.data.username, body.password);
      if (typeof session === 'string') return session;
      const selected = await call(api.POST('/characters/select', { body: { character_id: guest.data.character_id } }));
      if (!selected.ok) return selected.detail;
      saveSession({
        ...session,
        character: { name: selected.data.character_name, worldId: guest.data.world_id },
        guestNotice: `You play as guest account ${guest.data.username}: note the name to log in again. Guest accounts last 24 hours.`,
      });
      nav.game();
      return null;
    },
  );
}

export function authScreen(nav: Nav, notice?: string): Screen {
  const tabs = [
    { id: 'login', label: 'Log in', panel: loginForm(nav) },
    { id: 'register', label: 'New account', panel: registerForm(nav) },
    { id: 'guest', label: 'Play as guest', panel: guestForm(nav) },
  ];
  const tabList = h('div', { class: 'tabs', attrs: { role: 'tablist', 'aria-label': 'How to enter' } });
  const panels = tabs.map(({ id, panel }) => h('div', { class: 'tab-panel', attrs: { role: 'tabpanel', id: `panel-${id}`, 'aria-labelledby': `tab-${id}` } }, panel));
  const buttons = tabs.map(({ id, label }, index) => {
    const button = h('button', { text: label, attrs: { type: 'button', role: 'tab', id: `tab-${id}`, 'aria-controls': `panel-${id}` } });
    button.addEventListener('click', () => select(index));
    // Arrow keys move between tabs, as in any tab list.
    button.addEventListener('keydown', (event) => {
      const step = event.key === 'ArrowRight' ? 1 : event.key === 'ArrowLeft' ? -1 : 0;
      if (step === 0) return;
      event.preventDefault();
      const next = (index + step + tabs.length) % tabs.length;
      select(next);
      buttons[next]!.focus();
    });
    return button;
  });
  const select = (chosen: number) => {
    buttons.forEach((button, index) => {
      button.setAttribute('aria-selected', String(index === chosen));
      button.tabIndex = index === chosen ? 0 : -1;
      panels[index]!.hidden = index !== chosen;
    });
  };
  tabList.append(...buttons);
  select(0);
  const first = panels[0]!.querySelector('input') ?? buttons[0]!;
  const element = h(
    'main',
    { class: 'auth' },
    h(
      'section',
      { class: 'card auth-card' },
      h('h1', { class: 'brand' }, h('span', { class: 'brand-mark', text: '\u25c6', attrs: { 'aria-hidden': 'true' } }), ' MUD'),
      h('p', { class: 'tagline', text: 'A text adventure in many worlds: walk, talk and explore with other players.' }),
      notice ? h('p', { class: 'notice', text: notice, attrs: { role: 'status' } }) : null,
      tabList,
      ...panels,
    ),
  );
  return { element, focus: first };
}
