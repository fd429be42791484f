/**
 * The Build panel (roles that may build; nav.ts shows its button to them only, while they
 * play): the room the character stands in, its name and description, its exits (dig a new
 * room that way, remove one), the items lying in it (add, remove), the NPCs standing in it
 * and the room's script (build-scripts.ts), and the world's script errors. Every action is the
 * building API's, with the version last read, so a change made meanwhile by someone else is
 * refused with the server's `detail` and the panel reads the room again. The game screen
 * follows the changes through its `room` events, as every other player in the room does.
 */
import { api, call, type Outcome, type Schemas, type Session } from './api.ts';
import { ask, field, h } from './dom.ts';
import { utcDate } from './text.ts';
import { npcsHere, roomScript, scriptErrors } from './build-scripts.ts';

export const BUILDER_ROLES: ReadonlySet<Session['role']> = new Set(['worldbuilder', 'admin', 'superuser']);

const DIRECTIONS: Schemas['Direction'][] = ['north', 'south', 'east', 'west', 'up', 'down'];
const OPPOSITE: Record<Schemas['Direction'], Schemas['Direction']> = { north: 'south', south: 'north', east: 'west', west: 'east', up: 'down', down: 'up' };
const NEW_ROOM_TEXT = 'Nothing has been described here yet.';

export function openBuild(session: Session, opener: HTMLElement): void {
  const worldId = session.character!.worldId;
  let room: Schemas['BuildRoom'] | null = null;

  const status = h('p', { class: 'admin-status', attrs: { role: 'status' } });
  const closeButton = h('button', { class: 'ghost', text: 'Close', attrs: { type: 'button' } });
  const title = h('p', { class: 'muted build-room-id' });

  const nameInput = h('input', { attrs: { type: 'text', maxlength: '100', autocomplete: 'off' } });
  const descriptionInput = h('textarea', { attrs: { rows: '4', maxlength: '1000' } });
  const roomFormId = 'build-room-form';
  const roomForm = h('form', { class: 'build-room', attrs: { id: roomFormId } }, field('Room name', nameInput), field('Room description', descriptionInput), h('button', { class: 'primary', text: 'Save room', attrs: { type: 'submit' } }));

  const exitList = h('ul', { class: 'things' });
  const digDirection = h('select', {}, ...DIRECTIONS.map((d) => h('option', { text: d, attrs: { value: d } })));
  const digName = h('input', { attrs: { type: 'text', maxlength: '100', autocomplete: 'off' } });
  const digForm = h('form', { class: 'grant' }, field('Direction', digDirection), field('New room name', digName), h('button', { class: 'primary', text: 'Dig', attrs: { type: 'submit' } }));

  const itemList = h('ul', { class: 'things' });
  const itemName = h('input', { attrs: { type: 'text', maxlength: '100', autocomplete: 'off' } });
  const itemDescription = h('input', { attrs: { type: 'text', maxlength: '1000', autocomplete: 'off' } });
  const itemForm = h('form', { class: 'grant' }, field('Item name', itemName), field('Item description', itemDescription), h('button', { class: 'primary', text: 'Add item', attrs: { type: 'submit' } }));

  // An exit to a room that exists already (issue 35), one-way or both ways.
  const linkDirection = h('select', {}, ...DIRECTIONS.map((d) => h('option', { text: d, attrs: { value: d } })));
  const linkTarget = h('select', {});
  const linkBoth = h('input', { attrs: { type: 'checkbox', checked: true } });
  const linkForm = h(
    'form',
    { class: 'grant link-exit' },
    field('Way out', linkDirection),
    field('To the room', linkTarget),
    h('label', { class: 'check' }, linkBoth, ' Both ways'),
    h('button', { class: 'primary', text: 'Add exit', attrs: { type: 'submit' } }),
  );

  /** A save refused because someone changed the room meanwhile: what changed, and the builder's edit kept to save over it. */
  const conflict = h('div', { class: 'conflict', attrs: { role: 'alert', hidden: true } });
  /** The room as the form was last filled from it: what a conflict is told against. */
  let base: { name: string; description: string } | null = null;

  const historyList = h('ol', { class: 'history' });
  const historyButton = h('button', { class: 'ghost', text: 'Show changes', attrs: { type: 'button' } });
  const revertButton = h('button', { class: 'small danger', text: "Revert to the package's room", attrs: { type: 'button' } });

  const npcs = npcsHere(worldId);
  const errors = scriptErrors(worldId);
  const script = roomScript(async (text) => {
    if (!room) return { ok: false, status: 409, detail: 'You are not in a room.' };
    const outcome = await call(api.PATCH('/api/worlds/{world_id}/rooms/{room_id}', { params: { path: roomPath(room.id) }, body: { version: room.version, script: text } }));
    if (outcome.ok) {
      room = { ...outcome.data, items: room.items };
      render();
    } else await load();
    return outcome;
  });

  const report = (outcome: Outcome<unknown>, done: string): boolean => {
    status.textContent = outcome.ok ? done : outcome.detail;
    status.dataset.ok = String(outcome.ok);
    return outcome.ok;
  };

  const roomPath = (roomId: string) => ({ world_id: worldId, room_id: roomId });

  /** Shows the room; `keepEdit` leaves the name and description as the builder typed them. */
  const render = (keepEdit = false) => {
    if (!room) return;
    title.textContent = `${room.id} · zone ${room.zone} · version ${room.version}`;
    if (!keepEdit) {
      nameInput.value = room.name;
      descriptionInput.value = room.description;
      base = { name: room.name, description: room.description };
      conflict.hidden = true;
    }
    revertButton.hidden = room.origin !== 'package' || !room.changed;
    script.show(room);
    const exits = Object.entries(room.exits);
    exitList.replaceChildren(
      ...exits.map(([direction, to]) => {
        const remove = h('button', { class: 'small danger', text: 'Remove', attrs: { type: 'button', 'aria-label': `Remove the exit ${direction}` } });
        remove.addEventListener('click', async () => {
          const back = OPPOSITE[direction as Schemas['Direction']];
          const sure = await ask({
            question: `Remove the exit ${direction}?`,
            detail: `The way ${direction} to ${to} goes, and so does the way back (${back} from ${to}) if it leads here.`,
            confirm: 'Remove exit',
          });
          if (!sure) return;
          const outcome = await call(
            api.DELETE('/api/worlds/{world_id}/rooms/{room_id}/exits/{direction}', {
              params: { path: { ...roomPath(room!.id), direction: direction as Schemas['Direction'] }, query: { version: room!.version, two_way: true } },
            }),
          );
          report(outcome, `The exit ${direction} is gone.${unreachableNote(outcome)}`);
          await load();
        });
        return h('li', {}, h('span', { text: `${direction} → ${to}` }), remove);
      }),
    );
    if (exits.length === 0) exitList.append(h('li', { class: 'muted', text: 'No exits.' }));
    const items = room.items ?? [];
    itemList.replaceChildren(
      ...items.map((item) => {
        const remove = h('button', { class: 'small danger', text: 'Remove', attrs: { type: 'button', 'aria-label': `Remove ${item.name}` } });
        remove.addEventListener('click', async () => {
          const outcome = await call(api.DELETE('/api/worlds/{world_id}/items/{item_id}', { params: { path: { world_id: worldId, item_id: item.id }, query: { version: item.version } } }));
          report(outcome, `${item.name} is gone.`);
          await load();
        });
        const describe = h('button', { class: 'small', text: 'Describe', attrs: { type: 'button', 'aria-label': `Describe ${item.name}` } });
        describe.addEventListener('click', async () => {
          const text = h('input', { attrs: { type: 'text', maxlength: '1000', autocomplete: 'off' } });
          text.value = item.description;
          if (!(await ask({ question: `Describe ${item.name}`, detail: 'What players read when they examine it.', confirm: 'Save description', fields: [{ element: text, label: 'Description' }] }))) return;
          const outcome = await call(
            api.PATCH('/api/worlds/{world_id}/items/{item_id}', { params: { path: { world_id: worldId, item_id: item.id } }, body: { version: item.version, description: text.value } }),
          );
          report(outcome, `${item.name} is described anew.`);
          await load();
        });
        return h('li', {}, h('span', { text: item.name }), h('span', { class: 'row-actions' }, describe, remove));
      }),
    );
    if (items.length === 0) itemList.append(h('li', { class: 'muted', text: 'Nothing lies here.' }));
    const free = DIRECTIONS.filter((d) => room!.exits[d] === undefined);
    digDirection.replaceChildren(...free.map((d) => h('option', { text: d, attrs: { value: d } })));
    linkDirection.replaceChildren(...free.map((d) => h('option', { text: d, attrs: { value: d } })));
  };

  /** The world's rooms an exit may lead to (all but this one). */
  const loadTargets = async () => {
    const listed = await call(api.GET('/api/worlds/{world_id}/rooms', { params: { path: { world_id: worldId } } }));
    if (!listed.ok || !room) return;
    const here = room.id;
    linkTarget.replaceChildren(...listed.data.rooms.filter((r) => r.id !== here).map((r) => h('option', { text: `${r.name} (${r.id})`, attrs: { value: r.id } })));
  };

  /** What a change that closed a way tells of rooms no walk from the spawn reaches any more. */
  const unreachableNote = (outcome: Outcome<Schemas['BuildRoom']>): string => {
    const lost = outcome.ok ? (outcome.data.unreachable ?? []) : [];
    return lost.length === 0 ? '' : ` Warning: no walk from the world's spawn reaches ${lost.join(', ')} any more.`;
  };

  /** Reads the room the character stands in now. */
  const load = async () => {
    const where = await call(api.GET('/status/{session_id}', { params: { path: { session_id: session.id } } }));
    if (!where.ok || where.data.current_room === null) return void report(where.ok ? { ok: false, status: 409, detail: 'You are not in a room.' } : where, '');
    const read = await call(api.GET('/api/worlds/{world_id}/rooms/{room_id}', { params: { path: roomPath(where.data.current_room) } }));
    if (!read.ok) return void report(read, '');
    room = read.data;
    render();
    historyList.replaceChildren();
    historyButton.hidden = false;
    await Promise.all([npcs.load(room.id), errors.load(), loadTargets()]);
  };

  /** The changes builders made to this room, newest first (GET /api/worlds/{world_id}/changes). */
  const showHistory = async () => {
    if (!room) return;
    const roomId = room.id;
    const listed = await call(api.GET('/api/worlds/{world_id}/changes', { params: { path: { world_id: worldId }, query: { limit: 200 } } }));
    if (!listed.ok) return void report(listed, '');
    const mine = listed.data.changes.filter((c) => c.target_type === 'room' && c.target_id === roomId);
    historyList.replaceChildren(
      ...mine.map((c) => {
        const when = utcDate(c.created_at);
        return h('li', {}, h('time', { text: when.toLocaleString([], { dateStyle: 'short', timeStyle: 'short' }), attrs: { datetime: when.toISOString() } }), ` ${c.actor} · ${c.action} · ${c.via}`);
      }),
    );
    if (mine.length === 0) historyList.append(h('li', { class: 'muted', text: 'No builder has changed this room.' }));
  };
  historyButton.addEventListener('click', () => void showHistory());
  revertButton.addEventListener('click', async () => {
    if (!room) return;
    const sure = await ask({ question: `Revert ${room.name}?`, detail: "Its name, description and exits become the package's again; the change history keeps this one too.", confirm: 'Revert' });
    if (!sure) return;
    const outcome = await call(api.POST('/api/worlds/{world_id}/rooms/{room_id}/revert', { params: { path: roomPath(room.id) }, body: { version: room.version } }));
    report(outcome, 'The room is as its package has it again.');
    await load();
    await showHistory();
  });

  linkForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!room || !linkTarget.value) return;
    const direction = linkDirection.value as Schemas['Direction'];
    const body = { direction, to: linkTarget.value, two_way: linkBoth.checked, version: room.version };
    const exit = await call(api.POST('/api/worlds/{world_id}/rooms/{room_id}/exits', { params: { path: roomPath(room.id) }, body }));
    report(exit, `An exit ${direction} leads to ${linkTarget.selectedOptions[0]?.text ?? linkTarget.value}${linkBoth.checked ? ` (${OPPOSITE[direction]} leads back)` : ''}.`);
    await load();
  });

  roomForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!room) return;
    const body = { version: room.version, name: nameInput.value, description: descriptionInput.value };
    const outcome = await call(api.PATCH('/api/worlds/{world_id}/rooms/{room_id}', { params: { path: roomPath(room.id) }, body }));
    if (report(outcome, 'Room saved.') && outcome.ok) {
      room = { ...outcome.data, items: room.items };
      render();
    } else if (!outcome.ok && outcome.status === 409) await changedMeanwhile();
    else await load();
  });

  /**
   * Someone saved the room since it was read (a stale version): the builder's typing stays, the
   * panel tells what changed meanwhile and offers to save over it (with the version now current).
   */
  const changedMeanwhile = async () => {
    if (!room) return;
    const read = await call(api.GET('/api/worlds/{world_id}/rooms/{room_id}', { params: { path: roomPath(room.id) } }));
    if (!read.ok) return void report(read, '');
    room = read.data;
    render(true);
    const was = base ?? { name: '', description: '' };
    const changes = [
      room.name !== was.name ? `the name is now "${room.name}"` : null,
      room.description !== was.description ? `the description is now "${room.description}"` : null,
    ].filter((change): change is string => change !== null);
    const saveOver = h('button', { class: 'primary', text: 'Save mine over it', attrs: { type: 'submit' } });
    const discard = h('button', { class: 'ghost', text: 'Take theirs', attrs: { type: 'button' }, onClick: () => render() });
    conflict.replaceChildren(
      h('p', { text: `Someone changed this room while you edited it (it is at version ${room.version} now)${changes.length > 0 ? `: ${changes.join('; ')}` : ''}. Your edit is still here.` }),
      h('div', { class: 'row-actions' }, saveOver, discard),
    );
    // The button submits the form, which now sends the current version.
    saveOver.setAttribute('form', roomFormId);
    conflict.hidden = false;
    saveOver.focus();
  };

  digForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!room) return;
    const direction = digDirection.value as Schemas['Direction'];
    const created = await call(api.POST('/api/worlds/{world_id}/rooms', { params: { path: { world_id: worldId } }, body: { name: digName.value, description: NEW_ROOM_TEXT, zone: room.zone } }));
    if (!report(created, '') || !created.ok) return;
    const exit = await call(
      api.POST('/api/worlds/{world_id}/rooms/{room_id}/exits', { params: { path: roomPath(room.id) }, body: { direction, to: created.data.id, two_way: true, version: room.version } }),
    );
    if (!exit.ok) {
      // The room would lead nowhere: take it back, so the dig either happens whole or not at all.
      await call(api.DELETE('/api/worlds/{world_id}/rooms/{room_id}', { params: { path: roomPath(created.data.id), query: { version: created.data.version } } }));
    }
    if (report(exit, `You dig ${direction} to ${created.data.name} (${OPPOSITE[direction]} leads back).`)) digName.value = '';
    await load();
  });

  itemForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (!room) return;
    const body = { name: itemName.value, description: itemDescription.value || `${itemName.value.trim()}, nothing more.` };
    const created = await call(api.POST('/api/worlds/{world_id}/rooms/{room_id}/items', { params: { path: roomPath(room.id) }, body }));
    if (report(created, `${itemName.value.trim()} lies here now.`)) {
      itemName.value = '';
      itemDescription.value = '';
    }
    await load();
  });

  // A modal <dialog>, like the staff view: the browser keeps focus inside it and closes it on Escape.
  const dialog = h(
    'dialog',
    { class: 'admin build', attrs: { 'aria-labelledby': 'build-title' } },
    h('header', {}, h('h2', { text: 'Build', attrs: { id: 'build-title' } }), closeButton),
    status,
    title,
    h('section', { attrs: { 'aria-labelledby': 'build-room' } }, h('h3', { text: 'This room', attrs: { id: 'build-room' } }), conflict, roomForm),
    h('section', { attrs: { 'aria-labelledby': 'build-exits' } }, h('h3', { text: 'Exits', attrs: { id: 'build-exits' } }), exitList, digForm, linkForm),
    h('section', { attrs: { 'aria-labelledby': 'build-items' } }, h('h3', { text: 'Items here', attrs: { id: 'build-items' } }), itemList, itemForm),
    h(
      'section',
      { attrs: { 'aria-labelledby': 'build-history' } },
      h('h3', { text: 'History', attrs: { id: 'build-history' } }),
      h('div', { class: 'row-actions' }, historyButton, revertButton),
      historyList,
    ),
    h('section', { attrs: { 'aria-labelledby': 'build-npcs' } }, h('h3', { text: 'NPCs here', attrs: { id: 'build-npcs' } }), npcs.element),
    h('section', { attrs: { 'aria-labelledby': 'build-script' } }, h('h3', { text: 'Room script', attrs: { id: 'build-script' } }), script.element),
    h('section', { attrs: { 'aria-labelledby': 'build-errors' } }, h('h3', { text: 'Script errors', attrs: { id: 'build-errors' } }), errors.element),
  );
  closeButton.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    dialog.remove();
    opener.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  void load();
}
