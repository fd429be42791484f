/**
 * The staff view (admins and superusers; nav.ts shows its button to them only): accounts with
 * their online state, ban and unban, mute (for how long) and unmute, making a temporary account
 * permanent, role changes and password resets, world access grants, the live sessions with
 * kick, the players' open reports with resolve, and the audit log of staff actions. Each action
 * is offered where the viewer's role allows it (src/shared/roles.ts, the server's own table) and
 * is the API's, so the server's answers (403 and their `detail`) are shown as they come. Bans,
 * kicks and mutes are confirmed first, with a reason for the audit log; times are the viewer's
 * local time.
 */
import { api, call, type Outcome, type Schemas, type Session } from './api.ts';
import { ask, field, h } from './dom.ts';
import { chatLine, chatText, utcDate } from './text.ts';
import { hasPermission, outranks, ROLES, type Role } from '../src/shared/roles.ts';
import { PRESENCE_EVENT } from './live.ts';

/** How long the staff view waits after a presence event before it reads the lists again (a crowd's come in one read). */
const PRESENCE_REFRESH_MS = 500;

/**
 * What an account is doing, from its sessions (GET /admin/database/sessions): playing where a
 * connected session plays a character, link-dead or away where its sessions with a character
 * are not connected (so a closed tab is not "Playing"), online when logged in without playing.
 */
function onlineState(player: Schemas['PlayerRow'], sessions: readonly Schemas['SessionRow'][]): { text: string; on: boolean } {
  const mine = sessions.filter((s) => s.username === player.username);
  const worlds = (list: readonly Schemas['SessionRow'][]) => [...new Set(list.map((s) => s.world_id ?? '?'))].join(', ');
  const playing = mine.filter((s) => s.character_name !== null && s.connected);
  if (playing.length > 0) return { text: `Playing (${worlds(playing)})`, on: true };
  const linkdead = mine.filter((s) => s.character_name !== null && !s.away);
  if (linkdead.length > 0) return { text: `Link-dead (${worlds(linkdead)})`, on: false };
  if (mine.some((s) => s.character_name !== null)) return { text: 'Away', on: false };
  if (mine.some((s) => s.connected)) return { text: 'Online', on: true };
  return { text: mine.length > 0 ? 'Logged in, idle' : 'Offline', on: false };
}

/** An API time stamp (UTC) in the viewer's local date and time; the UTC value stays in `datetime`. */
function localTime(utc: string | null): HTMLElement {
  if (utc === null) return h('span', { class: 'muted', text: '—' });
  const date = utcDate(utc);
  if (Number.isNaN(date.getTime())) return h('span', { text: utc });
  return h('time', { text: date.toLocaleString([], { dateStyle: 'short', timeStyle: 'short' }), attrs: { datetime: date.toISOString(), title: `${utc} UTC` } });
}

/** A table; the actions column's heading is `Actions`, read by screen readers and not shown. */
function table(headings: string[], rows: HTMLTableRowElement[], empty: string): HTMLElement {
  const head = h('tr', {}, ...headings.map((text) => (text === '' ? h('th', { attrs: { scope: 'col' } }, h('span', { class: 'visually-hidden', text: 'Actions' })) : h('th', { text, attrs: { scope: 'col' } }))));
  const body = h('tbody', {}, ...rows);
  if (rows.length === 0) body.append(h('tr', {}, h('td', { class: 'muted', text: empty, attrs: { colspan: String(headings.length) } })));
  return h('div', { class: 'table-wrap' }, h('table', {}, h('thead', {}, head), body));
}

/** How long a mute may last, as the staff view offers it (minutes). */
const MUTE_DURATIONS: ReadonlyArray<[string, number]> = [
  ['15 minutes', 15],
  ['1 hour', 60],
  ['1 day', 1440],
  ['1 week', 10080],
];

/** The reason field of a staff action: optional, one line, the contract's length. */
function reasonInput(): HTMLInputElement {
  return h('input', { attrs: { type: 'text', maxlength: '200', autocomplete: 'off', placeholder: 'Optional, kept in the audit log' } });
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
  const reports = h('section', { attrs: { 'aria-labelledby': 'admin-reports' } });
  const audit = h('section', { attrs: { 'aria-labelledby': 'admin-audit' } });
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
    const muted = player.muted_until === null ? null : h('div', { class: 'muted-note', attrs: { title: player.mute_reason ?? '' } }, 'Muted until ', localTime(player.muted_until));
    if (!player.is_guest) return h('td', {}, 'Permanent', muted);
    return h('td', {}, 'Temporary until ', localTime(player.guest_expires_at), muted);
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
            const reason = reasonInput();
            const sure = await ask({ question: `Ban ${name}?`, detail: `${name} is logged out everywhere at once and cannot log in until unbanned.`, confirm: 'Ban', fields: [{ element: reason, label: 'Reason' }] });
            if (sure) await manage({ action: 'ban', target_username: name, reason: reason.value });
          }, true),
        );
        if (player.muted_until === null) {
          actions.push(
            button('Mute', `Mute ${name}`, async () => {
              const duration = h('select', {}, ...MUTE_DURATIONS.map(([text, minutes]) => h('option', { text, attrs: { value: String(minutes) } })));
              const reason = reasonInput();
              const sure = await ask({
                question: `Mute ${name}?`,
                detail: `${name} can still play but not say, yell, whisper, emote, tell or ooc until the mute ends; they are told until when, and why.`,
                confirm: 'Mute',
                fields: [
                  { element: duration, label: 'For' },
                  { element: reason, label: 'Reason', hint: 'Shown to them' },
                ],
              });
              if (sure) await manage({ action: 'mute', target_username: name, minutes: Number(duration.value), reason: reason.value });
            }),
          );
        } else actions.push(button('Unmute', `Unmute ${name}`, () => void manage({ action: 'unmute', target_username: name })));
      } else actions.push(button('Unban', `Unban ${name}`, () => void manage({ action: 'unban', target_username: name })));
    }
    if (player.is_guest && hasPermission(session.role, 'create_users')) {
      actions.push(button('Make permanent', `Make permanent ${name}`, () => void manage({ action: 'make_permanent', target_username: name })));
    }
    if (hasPermission(session.role, 'manage_users')) {
      actions.push(
        button('Reset password', `Reset password of ${name}`, async () => {
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

  // Readings overlap (a refresh follows every action): only the latest one started may draw.
  let reportsRead = 0;
  let auditRead = 0;

  /** The reports, open ones first: each with its chat, and Resolve (a note asked for) while open. */
  const showReports = async () => {
    if (!hasPermission(session.role, 'ban_users')) return;
    const reading = ++reportsRead;
    const heading = (count: number | null) => h('h3', { text: count === null ? 'Reports' : `Open reports (${count})`, attrs: { id: 'admin-reports' } });
    const listed = await call(api.GET('/admin/reports', { params: { query: { limit: 50 } } }));
    if (reading !== reportsRead) return;
    if (!listed.ok) {
      reports.replaceChildren(heading(null), h('p', { class: 'form-error', text: listed.detail }));
      return;
    }
    const rows = listed.data.reports.map((r) => {
      const chat = r.context.length === 0 ? null : h('details', {}, h('summary', { text: `Chat before (${r.context.length})` }), h('ol', { class: 'report-chat' }, ...r.context.map((m) => h('li', { text: chatText(chatLine(m, '')) }))));
      const action =
        r.status === 'open'
          ? button('Resolve', `Resolve report ${r.id}`, async () => {
              const note = h('input', { attrs: { type: 'text', maxlength: '1000', autocomplete: 'off' } });
              if (await ask({ question: `Resolve report ${r.id}?`, detail: `${r.reporter_character} about ${r.reported_character}: ${r.text}`, confirm: 'Resolve', input: { element: note, label: 'What was done' } })) {
                report(await call(api.POST('/admin/reports/{report_id}/resolve', { params: { path: { report_id: r.id } }, body: { note: note.value } })));
              }
            })
          : h('span', { class: 'muted', text: `Resolved by ${r.resolved_by ?? '?'}: ${r.resolution_note ?? ''}` });
      return h(
        'tr',
        { class: r.status === 'open' ? '' : 'resolved' },
        h('td', {}, localTime(r.created_at)),
        h('td', { text: `${r.reporter_character} (${r.reporter_username})` }),
        h('td', { text: r.reported_username === null ? r.reported_character : `${r.reported_character} (${r.reported_username})` }),
        h('td', { text: `${r.world_id}${r.room_id === null ? '' : ` · ${r.room_id}`}` }),
        h('td', {}, h('div', { text: r.text }), chat),
        h('td', {}, action),
      );
    });
    reports.replaceChildren(heading(listed.data.reports.filter((r) => r.status === 'open').length), table(['When', 'From', 'About', 'Where', 'What', ''], rows, 'No reports.'));
  };

  /** The audit log, newest first, a page at a time (Older entries adds the next). */
  const showAudit = async (before?: number) => {
    if (!hasPermission(session.role, 'view_logs')) return;
    const reading = ++auditRead;
    const heading = h('h3', { text: 'Audit log', attrs: { id: 'admin-audit' } });
    const page = await call(api.GET('/admin/audit', { params: { query: before === undefined ? { limit: 50 } : { limit: 50, before } } }));
    if (reading !== auditRead) return;
    if (!page.ok) {
      audit.replaceChildren(heading, h('p', { class: 'form-error', text: page.detail }));
      return;
    }
    const rows = page.data.entries.map((e) =>
      h(
        'tr',
        {},
        h('td', {}, localTime(e.created_at)),
        h('td', { text: `${e.actor_username} (${e.actor_role})` }),
        h('td', { text: e.action.replace('_', ' ') }),
        h('td', { text: e.target_username ?? '—' }),
        h('td', { text: e.reason ?? '—' }),
        h('td', { text: e.detail ?? '' }),
        h('td', { text: e.door }),
      ),
    );
    const older = page.data.next_before === null ? null : button('Older entries', 'Older entries of the audit log', () => void showAudit(page.data.next_before!));
    const shown = before === undefined ? null : audit.querySelector('tbody');
    if (shown) {
      shown.append(...rows);
      audit.querySelector('.older')?.replaceWith(older ? h('div', { class: 'older' }, older) : '');
      return;
    }
    audit.replaceChildren(heading, table(['When', 'Staff', 'Action', 'Whom', 'Reason', 'Detail', 'Door'], rows, 'Nothing recorded yet.'), ...(older ? [h('div', { class: 'older' }, older)] : []));
  };

  const refresh = async () => {
    void showReports();
    void showAudit();
    const [players, live] = await Promise.all([call(api.GET('/admin/database/players')), call(api.GET('/admin/database/sessions'))]);
    const onlineCell = (player: Schemas['PlayerRow']) => {
      const state = onlineState(player, live.ok ? live.data.sessions : []);
      return h('td', {}, h('span', { class: `dot ${state.on ? 'on' : 'off'}`, attrs: { 'aria-hidden': 'true' } }), state.text);
    };
    if (!players.ok) users.replaceChildren(h('h3', { text: 'Users', attrs: { id: 'admin-users' } }), h('p', { class: 'form-error', text: players.detail }));
    else {
      usernames.replaceChildren(...players.data.players.map((player) => h('option', { attrs: { value: player.username } })));
      const rows = players.data.players.map((player) =>
        h(
          'tr',
          { class: player.is_active ? '' : 'banned' },
          h('th', { text: player.username, attrs: { scope: 'row' } }),
          roleCell(player),
          onlineCell(player),
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
          const reason = reasonInput();
          if (!(await ask({ question: `Kick ${who}?`, detail: `Session ${row.id} ends at once; ${row.username} can log in again.`, confirm: 'Kick', fields: [{ element: reason, label: 'Reason' }] }))) return;
          report(await call(api.POST('/admin/session/kick', { body: { target_session_id: String(row.id), reason: reason.value } })));
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
          // One's own session is left by logging out, not kicked.
          h('td', {}, row.current ? h('span', { class: 'muted', text: 'This session' }) : kick),
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
    reports,
    users,
    sessions,
    audit,
  );
  closeButton.addEventListener('click', () => dialog.close());
  refreshButton.addEventListener('click', () => void refresh());
  // Who plays changes while the view is open: read it again after presence events (issue 35).
  let presenceTimer: ReturnType<typeof setTimeout> | undefined;
  const presenceChanged = () => {
    clearTimeout(presenceTimer);
    presenceTimer = setTimeout(() => void refresh(), PRESENCE_REFRESH_MS);
  };
  document.addEventListener(PRESENCE_EVENT, presenceChanged);
  dialog.addEventListener('close', () => {
    clearTimeout(presenceTimer);
    document.removeEventListener(PRESENCE_EVENT, presenceChanged);
    dialog.remove();
    opener.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  void refresh();
}
