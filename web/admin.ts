/**
 * The staff view (admins and superusers; nav.ts shows its button to them only): accounts with
 * their online state, ban and unban, making a temporary account permanent, role changes and
 * password resets, world access grants, and the live sessions with kick. Each action is
 * offered where the viewer's role allows it (src/shared/roles.ts, the server's own table) and
 * is the API's, so the server's answers (403 and their `detail`) are shown as they come. Bans
 * and kicks are confirmed first; times are the viewer's local time.
 */
import { api, call, type Outcome, type Schemas, type Session } from './api.ts';
import { ask, field, h } from './dom.ts';
import { utcDate } from './text.ts';
import { hasPermission, outranks, ROLES, type Role } from '../src/shared/roles.ts';

function onlineText(player: { is_online_in_world: boolean; is_online_account: boolean; online_world_ids: string[] }): string {
  if (player.is_online_in_world) return `Playing (${player.online_world_ids.join(', ')})`;
  return player.is_online_account ? 'Online' : 'Offline';
}

/** An API time stamp (UTC) in the viewer's local date and time; the UTC value stays in `datetime`. */
function localTime(utc: string | null): HTMLElement {
  if (utc === null) return h('span', { class: 'muted', text: '—' });
  const date = utcDate(utc);
  if (Number.isNaN(date.getTime())) return h('span', { text: utc });
  return h('time', { text: date.toLocaleString([], { dateStyle: 'short', timeStyle: 'short' }), attrs: { datetime: date.toISOString(), title: `${utc} UTC` } });
}

function table(headings: string[], rows: HTMLTableRowElement[], empty: string): HTMLElement {
  const head = h('tr', {}, ...headings.map((text) => h('th', { text, attrs: { scope: 'col' } })));
  const body = h('tbody', {}, ...rows);
  if (rows.length === 0) body.append(h('tr', {}, h('td', { class: 'muted', text: empty, attrs: { colspan: String(headings.length) } })));
  return h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, head), body));
}

/** Whether a session is live now: which one of a player's sessions is the one being played. */
function connection(row: Schemas['SessionRow']): string {
  if (row.open_streams > 0) return `Yes (${row.open_streams} stream${row.open_streams === 1 ? '' : 's'})`;
  if (row.connected) return 'Yes (requests)';
  return row.away ? 'No (away)' : row.character_name ? 'No (link-dead)' : 'No';
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

  const manage = async (body: Schemas['ManageUserRequest']) => report(await call(api.POST('/admin/user/manage', { body })));
  const button = (text: string, label: string, onClick: () => void, danger = false) =>
    h('button', { class: `small${danger ? ' danger' : ''}`, text, attrs: { type: 'button', 'aria-label': label }, onClick });

  /** The role cell: a choice of the roles the viewer may give, where it may change this account's role. */
  const roleCell = (player: Schemas['PlayerRow']): HTMLElement => {
    if (!hasPermission(session.role, 'manage_users') || !outranks(session.role, player.role)) return h('td', { text: player.role });
    const assignable = ROLES.filter((role) => session.role === 'superuser' || outranks(session.role, role));
    const select = h('select', { attrs: { 'aria-label': `Role of ${player.username}` } }, ...assignable.map((role) => h('option', { text: role, attrs: { value: role, selected: role === player.role } })));
    select.addEventListener('change', async () => {
      const role = select.value as Role;
      const sure = await ask({ question: `Make ${player.username} ${role === 'admin' ? 'an' : 'a'} ${role}?`, detail: `${player.username} is ${player.role === 'admin' ? 'an' : 'a'} ${player.role} now; the change counts from their next request.`, confirm: 'Change role' });
      if (sure) await manage({ action: 'change_role', target_username: player.username, new_role: role });
      else select.value = player.role;
    });
    return h('td', {}, select);
  };

  const accountText = (player: Schemas['PlayerRow']): HTMLElement => {
    if (!player.is_active) return h('td', { text: 'Banned' });
    if (!player.is_guest) return h('td', { text: 'Permanent' });
    return h('td', {}, 'Temporary until ', localTime(player.guest_expires_at));
  };

  const userActions = (player: Schemas['PlayerRow']): HTMLElement[] => {
    // Nobody manages their own account here, nor one of equal or higher rank (the server refuses both).
    if (player.username === session.username || !outranks(session.role, player.role)) return [];
    const actions: HTMLElement[] = [];
    const name = player.username;
    if (hasPermission(session.role, 'ban_users')) {
      if (player.is_active) {
        actions.push(
          button('Ban', `Ban ${name}`, async () => {
            if (await ask({ question: `Ban ${name}?`, detail: `${name} is logged out everywhere at once and cannot log in until unbanned.`, confirm: 'Ban' })) await manage({ action: 'ban', target_username: name });
          }, true),
        );
      } else actions.push(button('Unban', `Unban ${name}`, () => void manage({ action: 'unban', target_username: name })));
    }
    if (player.is_guest && hasPermission(session.role, 'create_users')) {
      actions.push(button('Make permanent', `Make ${name} permanent`, () => void manage({ action: 'make_permanent', target_username: name })));
    }
    if (hasPermission(session.role, 'manage_users')) {
      actions.push(
        button('Reset password', `Reset the password of ${name}`, async () => {
          const password = h('input', { attrs: { type: 'password', autocomplete: 'new-password' } });
          const sure = await ask({
            question: `New password for ${name}`,
            detail: `${name} is logged out everywhere and logs in with this password from now on.`,
            confirm: 'Set password',
            input: { element: password, label: 'New password' },
          });
          if (sure) await manage({ action: 'change_password', target_username: name, new_password: password.value });
        }),
      );
    }
    return actions;
  };

  const refresh = async () => {
    const [players, live] = await Promise.all([call(api.GET('/admin/database/players')), call(api.GET('/admin/database/sessions'))]);
    if (!players.ok) users.replaceChildren(h('h3', { text: 'Users', attrs: { id: 'admin-users' } }), h('p', { class: 'form-error', text: players.detail }));
    else {
      usernames.replaceChildren(...players.data.players.map((player) => h('option', { attrs: { value: player.username } })));
      const rows = players.data.players.map((player) =>
        h(
          'tr',
          { class: player.is_active ? '' : 'banned' },
          h('th', { text: player.username, attrs: { scope: 'row' } }),
          roleCell(player),
          h('td', {}, h('span', { class: `dot ${player.is_online_account ? 'on' : 'off'}`, attrs: { 'aria-hidden': 'true' } }), onlineText(player)),
          accountText(player),
          h('td', { text: String(player.character_count) }),
          h('td', {}, localTime(player.last_login)),
          h('td', {}, h('div', { class: 'row-actions' }, ...userActions(player))),
        ),
      );
      users.replaceChildren(h('h3', { text: `Users (${rows.length})`, attrs: { id: 'admin-users' } }), table(['User', 'Role', 'Online', 'Account', 'Characters', 'Last login', ''], rows, 'No users.'));
    }
    if (!live.ok) sessions.replaceChildren(h('h3', { text: 'Sessions', attrs: { id: 'admin-sessions' } }), h('p', { class: 'form-error', text: live.detail }));
    else {
      const rows = live.data.sessions.map((row) => {
        const kick = button('Kick', `Kick session ${row.id} of ${row.username}`, async () => {
          const who = row.character_name ? `${row.character_name} (${row.username})` : row.username;
          if (!(await ask({ question: `Kick ${who}?`, detail: `Session ${row.id} ends at once; ${row.username} can log in again.`, confirm: 'Kick' }))) return;
          report(await call(api.POST('/admin/session/kick', { body: { target_session_id: String(row.id) } })));
        }, true);
        return h(
          'tr',
          {},
          h('th', { text: String(row.id), attrs: { scope: 'row' } }),
          h('td', { text: row.username }),
          h('td', { text: row.character_name ?? '—' }),
          h('td', { text: row.world_id ?? '—' }),
          h('td', { text: row.client_type }),
          h('td', { text: connection(row) }),
          h('td', {}, localTime(row.last_activity)),
          h('td', {}, kick),
        );
      });
      sessions.replaceChildren(
        h('h3', { text: `Active sessions (${rows.length})`, attrs: { id: 'admin-sessions' } }),
        table(['#', 'User', 'Character', 'World', 'Client', 'Connected', 'Last activity', ''], rows, 'No sessions.'),
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
