/**
 * The staff view (admins and superusers; nav.ts shows its button to them only): accounts with
 * their online state, ban and unban, world access grants, and the live sessions with kick.
 * Every action is the API's, so the server's permission answers (403 and their `detail`) are
 * shown as they come.
 */
import { api, call, type Outcome, type Session } from './api.ts';
import { field, h } from './dom.ts';

function onlineText(player: { is_online_in_world: boolean; is_online_account: boolean; online_world_ids: string[] }): string {
  if (player.is_online_in_world) return `Playing (${player.online_world_ids.join(', ')})`;
  return player.is_online_account ? 'Online' : 'Offline';
}

function table(headings: string[], rows: HTMLTableRowElement[], empty: string): HTMLElement {
  const head = h('tr', {}, ...headings.map((text) => h('th', { text, attrs: { scope: 'col' } })));
  const body = h('tbody', {}, ...rows);
  if (rows.length === 0) body.append(h('tr', {}, h('td', { class: 'muted', text: empty, attrs: { colspan: String(headings.length) } })));
  return h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, head), body));
}

export function openAdmin(session: Session, opener: HTMLElement): void {
  const status = h('p', { class: 'admin-status', attrs: { role: 'status' } });
  const users = h('section', { attrs: { 'aria-labelledby': 'admin-users' } });
  const sessions = h('section', { attrs: { 'aria-labelledby': 'admin-sessions' } });
  const closeButton = h('button', { class: 'ghost', text: 'Close', attrs: { type: 'button' } });
  const refreshButton = h('button', { class: 'ghost', text: 'Refresh', attrs: { type: 'button' } });

  const report = (outcome: Outcome<{ success: boolean; message: string }>) => {
    const ok = outcome.ok && outcome.data.success;
    status.textContent = outcome.ok ? outcome.data.message : outcome.detail;
    status.dataset.ok = String(ok);
    void refresh();
  };

  const usernameInput = h('input', { attrs: { type: 'text', list: 'admin-usernames', autocomplete: 'off', spellcheck: 'false' } });
  const usernames = h('datalist', { attrs: { id: 'admin-usernames' } });
  const worldSelect = h('select', {}, ...session.worlds.map((world) => h('option', { text: world.name, attrs: { value: world.id } })));
  const grantForm = h(
    'form',
    { class: 'grant' },
    field('User', usernameInput),
    usernames,
    field('World', worldSelect),
    h('button', { class: 'primary', text: 'Grant access', attrs: { type: 'submit' } }),
  );
  grantForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    const body = { target_username: usernameInput.value.trim(), world_id: worldSelect.value, can_access: true };
    report(await call(api.POST('/admin/user/world-access', { body })));
  });

  const refresh = async () => {
    const [players, live] = await Promise.all([call(api.GET('/admin/database/players')), call(api.GET('/admin/database/sessions'))]);
    if (!players.ok) users.replaceChildren(h('h3', { text: 'Users', attrs: { id: 'admin-users' } }), h('p', { class: 'form-error', text: players.detail }));
    else {
      usernames.replaceChildren(...players.data.players.map((player) => h('option', { attrs: { value: player.username } })));
      const rows = players.data.players.map((player) => {
        const banned = !player.is_active;
        const action = h('button', { class: 'small', text: banned ? 'Unban' : 'Ban', attrs: { type: 'button', 'aria-label': `${banned ? 'Unban' : 'Ban'} ${player.username}` } });
        action.addEventListener('click', async () => {
          report(await call(api.POST('/admin/user/manage', { body: { action: banned ? 'unban' : 'ban', target_username: player.username } })));
        });
        return h(
          'tr',
          { class: banned ? 'banned' : '' },
          h('th', { text: player.username, attrs: { scope: 'row' } }),
          h('td', { text: player.role }),
          h('td', {}, h('span', { class: `dot ${player.is_online_account ? 'on' : 'off'}`, attrs: { 'aria-hidden': 'true' } }), onlineText(player)),
          h('td', { text: banned ? 'Banned' : player.is_guest ? 'Guest' : 'Active' }),
          h('td', { text: String(player.character_count) }),
          h('td', {}, action),
        );
      });
      users.replaceChildren(h('h3', { text: `Users (${rows.length})`, attrs: { id: 'admin-users' } }), table(['User', 'Role', 'Online', 'Account', 'Characters', ''], rows, 'No users.'));
    }
    if (!live.ok) sessions.replaceChildren(h('h3', { text: 'Sessions', attrs: { id: 'admin-sessions' } }), h('p', { class: 'form-error', text: live.detail }));
    else {
      const rows = live.data.sessions.map((row) => {
        const kick = h('button', { class: 'small danger', text: 'Kick', attrs: { type: 'button', 'aria-label': `Kick session ${row.id} of ${row.username}` } });
        kick.addEventListener('click', async () => {
          report(await call(api.POST('/admin/session/kick', { body: { target_session_id: String(row.id) } })));
        });
        return h(
          'tr',
          {},
          h('th', { text: String(row.id), attrs: { scope: 'row' } }),
          h('td', { text: row.username }),
          h('td', { text: row.character_name ?? '—' }),
          h('td', { text: row.world_id ?? '—' }),
          h('td', { text: row.client_type }),
          h('td', { text: row.last_activity }),
          h('td', {}, kick),
        );
      });
      sessions.replaceChildren(
        h('h3', { text: `Active sessions (${rows.length})`, attrs: { id: 'admin-sessions' } }),
        table(['#', 'User', 'Character', 'World', 'Client', 'Last activity (UTC)', ''], rows, 'No sessions.'),
      );
    }
  };

  // A modal <dialog>: the browser keeps focus inside it and closes it on Escape.
  const dialog = h(
    'dialog',
    { class: 'admin', attrs: { 'aria-labelledby': 'admin-title' } },
    h('header', {}, h('h2', { text: 'Administration', attrs: { id: 'admin-title' } }), refreshButton, closeButton),
    status,
    h('section', { attrs: { 'aria-labelledby': 'admin-grant' } }, h('h3', { text: 'Grant world access', attrs: { id: 'admin-grant' } }), grantForm),
    users,
    sessions,
  );
  closeButton.addEventListener('click', () => dialog.close());
  refreshButton.addEventListener('click', () => void refresh());
  dialog.addEventListener('close', () => {
    dialog.remove();
    opener.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  void refresh();
}
