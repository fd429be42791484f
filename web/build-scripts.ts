/**
 * The Build panel's parts for what acts on its own (build.ts places them): the NPCs standing in
 * the room (create, rename and describe, script, delete, revert to the package), the script
 * editor for an NPC or the room (a plain text area), and the world's script errors.
 *
 * Every write carries the version last read. A refused one keeps what the builder typed: a
 * refresh from the server changes only fields the builder has not edited, so a stale version
 * (409) shows the server's words, takes the newer version and leaves the text to be saved
 * again; a script that does not compile (400) is refused with the server's `detail`, which
 * names the line, and the caret goes to that line. A script the server suspended after its
 * faults in a row says so, beside the NPC's name and over its editor, and saving it runs it
 * again, changed or not.
 */
import { api, call, type Outcome, type Schemas } from './api.ts';
import { ask, field, h } from './dom.ts';
import { utcDate } from './text.ts';

type Npc = Schemas['BuildNpc'];
type NpcSummary = Schemas['BuildNpcSummary'];

const SCRIPT_HINT =
  'JavaScript: onLoad(), onEnter(actor), onLeave(actor), onSay(actor, text), onCommand(actor, verb, args), an item\'s onGet(actor) and onDrop(actor), and a timer\'s function by its name, as every(seconds, "name") and after(seconds, "name") name it (README, "Scripting NPCs, rooms and items"). Empty: no script.';
const SUSPENDED_TEXT = 'Suspended after faults in a row: save the script again to run it.';
/** The contract's ScriptSource maxLength. */
const SCRIPT_MAX_LENGTH = 65536;
const ERRORS_SHOWN = 20;
/** NPCs a list page holds: the contract's most. */
const NPC_PAGE = 200;

/** An input the server's answers refresh only while the builder has not changed it. */
interface Kept {
  show(value: string): void;
  changed(): boolean;
}

function kept(input: HTMLInputElement | HTMLTextAreaElement): Kept {
  let shown = '';
  return {
    show: (value) => {
      if (input.value === shown) input.value = value;
      shown = value;
    },
    changed: () => input.value !== shown,
  };
}

/**
 * A status line of its own for a form, so its outcome shows where the builder is looking. A
 * save refused for a stale version (`saving`) says that the typed text stayed.
 */
function statusLine(): { element: HTMLElement; report(outcome: Outcome<unknown>, done: string, saving?: boolean): boolean } {
  const element = h('p', { class: 'admin-status', attrs: { role: 'status' } });
  return {
    element,
    report: (outcome, done, saving = false) => {
      const stale = !outcome.ok && outcome.status === 409 && saving;
      element.textContent = outcome.ok ? done : stale ? `${outcome.detail}. What you typed is kept: save again to replace that version with it.` : outcome.detail;
      element.dataset.ok = String(outcome.ok);
      return outcome.ok;
    },
  };
}

/**
 * Whether the server stopped running the script after `faults_to_suspend` faults in a row
 * (docs/decisions.md, "Scripts"). A room carries `script_suspended` when read alone, not in
 * lists: absent, its script counts as running.
 */
function suspended(owner: NpcSummary | Schemas['BuildRoom']): boolean {
  return owner.script_suspended === true;
}

/** The note over a suspended script's editor; the editor is described by it, so a screen reader says it there too. */
function suspendedNote(area: HTMLTextAreaElement): { element: HTMLElement; show(on: boolean): void } {
  const element = h('p', { class: 'suspended', text: SUSPENDED_TEXT, attrs: { id: `${area.id}-suspended`, hidden: true } });
  return {
    element,
    show: (on) => {
      element.hidden = !on;
      if (on) area.setAttribute('aria-describedby', element.id);
      else area.removeAttribute('aria-describedby');
    },
  };
}

function scriptArea(): HTMLTextAreaElement {
  return h('textarea', { class: 'script', attrs: { rows: '10', maxlength: String(SCRIPT_MAX_LENGTH), wrap: 'off', spellcheck: 'false', autocapitalize: 'none', autocomplete: 'off' } });
}

/** What a script field sends: its text, or null (no script) when it is blank. */
function scriptValue(area: HTMLTextAreaElement): string | null {
  return area.value.trim() === '' ? null : area.value;
}

/** A compile error names its line ("The script does not compile (line 3): …"): the caret goes there. */
function showLine(area: HTMLTextAreaElement, outcome: Outcome<unknown>): void {
  const line = !outcome.ok && outcome.status === 400 ? /\(line (\d+)\)/.exec(outcome.detail) : null;
  if (!line) return;
  const lines = area.value.split('\n');
  const index = Math.min(Number(line[1]), lines.length) - 1;
  const start = lines.slice(0, index).reduce((sum, text) => sum + text.length + 1, 0);
  area.focus();
  area.setSelectionRange(start, start + (lines[index]?.length ?? 0));
  // Selecting does not scroll a text area: the line is brought into view, a few lines down.
  const lineHeight = parseFloat(getComputedStyle(area).lineHeight) || 18;
  area.scrollTop = Math.max(0, (index - 3) * lineHeight);
}

export interface RoomScript {
  element: HTMLElement;
  /** Shows the room's script as the server has it (unless the builder is editing it), and whether it is suspended. */
  show(room: Schemas['BuildRoom']): void;
}

/** The room's own script: `save` sends it with the room's version and reads the room again. */
export function roomScript(save: (script: string | null) => Promise<Outcome<unknown>>): RoomScript {
  const area = scriptArea();
  const text = kept(area);
  const status = statusLine();
  const scriptField = field('Room script', area, SCRIPT_HINT);
  const note = suspendedNote(area);
  const form = h('form', { class: 'script-form' }, note.element, scriptField, h('button', { class: 'primary', text: 'Save script', attrs: { type: 'submit' } }), status.element);
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const outcome = await save(scriptValue(area));
    status.report(outcome, scriptValue(area) === null ? 'The room has no script now.' : 'Room script saved.', true);
    showLine(area, outcome);
  });
  return {
    element: form,
    show: (room) => {
      text.show(room.script ?? '');
      note.show(suspended(room));
    },
  };
}

interface NpcEditor {
  element: HTMLLIElement;
  /** The NPC as last shown, its script with it. */
  npc(): Npc;
  show(npc: Npc): void;
  open(): void;
}

export interface NpcsHere {
  element: HTMLElement;
  /** Reads the NPCs standing in `roomId` now (where their script walked them, not their home). */
  load(roomId: string): Promise<void>;
}

/** The NPCs standing in the builder's room, each with its editor, and a form that makes one here. */
export function npcsHere(worldId: string): NpcsHere {
  let roomId: string | null = null;
  const editors = new Map<string, NpcEditor>();
  const list = h('ul', { class: 'things npc-editors' });
  const status = statusLine();
  const npcPath = (npcId: string) => ({ world_id: worldId, npc_id: npcId });

  const editor = (first: Npc): NpcEditor => {
    let npc = first;
    const summary = h('summary');
    const details = h('details', {}, summary);
    const name = h('input', { attrs: { type: 'text', maxlength: '100', autocomplete: 'off' } });
    const description = h('textarea', { attrs: { rows: '3', maxlength: '1000' } });
    const area = scriptArea();
    const fields = { name: kept(name), description: kept(description), script: kept(area) };
    const own = statusLine();
    const save = h('button', { class: 'primary', text: 'Save NPC', attrs: { type: 'submit' } });
    const remove = h('button', { class: 'danger', text: 'Delete', attrs: { type: 'button' } });
    const revert = h('button', { text: 'Revert to the package', attrs: { type: 'button' } });
    const scriptField = field('Script', area, SCRIPT_HINT);
    const note = suspendedNote(area);
    const form = h('form', { class: 'npc-form' }, field('Name', name), field('Description', description), note.element, scriptField, h('div', { class: 'npc-buttons' }, save, revert, remove), own.element);
    details.append(form);

    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      // Only what changed: saving a name leaves the script (and its timers and state) running.
      const body: Schemas['NpcUpdateRequest'] = { version: npc.version };
      if (fields.name.changed()) body.name = name.value;
      if (fields.description.changed()) body.description = description.value;
      // A suspended script runs again once saved, unchanged or not.
      if (fields.script.changed() || suspended(npc)) body.script = scriptValue(area);
      if (Object.keys(body).length === 1) return void own.report({ ok: true, data: null }, 'Nothing changed.');
      const outcome = await call(api.PATCH('/api/worlds/{world_id}/npcs/{npc_id}', { params: { path: npcPath(npc.id) }, body }));
      if (outcome.ok) show(outcome.data);
      own.report(outcome, `${outcome.ok ? outcome.data.name : npc.name} saved.`, true);
      showLine(area, outcome);
      // A script refused as it is changed nothing; anything else refused may be news (a newer version, a deleted NPC).
      if (!outcome.ok && outcome.status !== 400) await reload();
    });
    remove.addEventListener('click', async () => {
      const sure = await ask({ question: `Delete ${npc.name}?`, detail: 'It leaves the room at once; its script, timers and state go with it.', confirm: 'Delete' });
      if (!sure) return;
      const outcome = await call(api.DELETE('/api/worlds/{world_id}/npcs/{npc_id}', { params: { path: npcPath(npc.id), query: { version: npc.version } } }));
      status.report(outcome, `${npc.name} is gone.`);
      await reload();
    });
    revert.addEventListener('click', async () => {
      const outcome = await call(api.POST('/api/worlds/{world_id}/npcs/{npc_id}/revert', { params: { path: npcPath(npc.id) }, body: { version: npc.version } }));
      if (outcome.ok) {
        // The package's words replace the builder's, edited or not.
        name.value = outcome.data.name;
        description.value = outcome.data.description;
        area.value = outcome.data.script ?? '';
        show(outcome.data);
      }
      own.report(outcome, `${npc.name} is as its package has it again.`);
      await reload();
    });

    const show = (next: Npc) => {
      // A read that left before a save answers after it: it shows nothing newer.
      if (next.version < npc.version) return;
      npc = next;
      const from = npc.script_file ? `script ${npc.script_file}` : npc.script ? "a builder's script" : 'no script';
      const home = npc.room_id === npc.standing_in ? '' : ` · lives in ${npc.room_id}`;
      const stopped = suspended(npc);
      summary.replaceChildren(h('strong', { text: npc.name }), h('span', { class: 'muted', text: ` ${npc.id} · version ${npc.version} · ${from}${home}` }), ...(stopped ? [' ', h('span', { class: 'badge suspended', text: 'Script suspended' })] : []));
      note.show(stopped);
      fields.name.show(npc.name);
      fields.description.show(npc.description);
      fields.script.show(npc.script ?? '');
      revert.hidden = !(npc.origin === 'package' && npc.changed);
      remove.setAttribute('aria-label', `Delete ${npc.name}`);
    };
    show(first);
    return {
      element: h('li', {}, details),
      npc: () => npc,
      show,
      open: () => {
        details.open = true;
        area.focus();
      },
    };
  };

  /** The NPCs standing in the room now, page by page. */
  const standingIn = async (room: string): Promise<Outcome<NpcSummary[]>> => {
    const here: NpcSummary[] = [];
    for (let after: string | undefined; ; ) {
      const page = await call(api.GET('/api/worlds/{world_id}/npcs', { params: { path: { world_id: worldId }, query: { standing_in: room, limit: NPC_PAGE, ...(after === undefined ? {} : { after }) } } }));
      if (!page.ok) return page;
      here.push(...page.data.npcs);
      if (page.data.npcs.length < NPC_PAGE) return { ok: true, data: here };
      after = page.data.npcs.at(-1)!.id;
    }
  };

  /**
   * Lists carry no scripts: an NPC is read whole when its editor is new or its version moved,
   * else the list's word on it (a suspension changes no version) goes with the script it has.
   */
  const reload = async () => {
    if (roomId === null) return;
    const listed = await standingIn(roomId);
    if (!listed.ok) return void status.report(listed, '');
    const here = listed.data;
    for (const id of [...editors.keys()]) if (!here.some((npc) => npc.id === id)) editors.delete(id);
    for (const summary of here) {
      const known = editors.get(summary.id);
      if (known && known.npc().version === summary.version) {
        known.show({ ...known.npc(), ...summary });
        continue;
      }
      const read = await call(api.GET('/api/worlds/{world_id}/npcs/{npc_id}', { params: { path: npcPath(summary.id) } }));
      if (!read.ok) return void status.report(read, '');
      if (known) known.show(read.data);
      else editors.set(summary.id, editor(read.data));
    }
    const shown = here.map((npc) => editors.get(npc.id)!.element);
    // Put back only when the list changed: moving an element out of the page takes the focus
    // and the scroll position from what is in it (the caret at a compile error's line).
    if (shown.length !== list.children.length || shown.some((element, i) => list.children[i] !== element)) list.replaceChildren(...shown);
    if (here.length === 0) list.replaceChildren(h('li', { class: 'muted', text: 'No NPC stands here.' }));
  };

  const newName = h('input', { attrs: { type: 'text', maxlength: '100', autocomplete: 'off' } });
  const newDescription = h('input', { attrs: { type: 'text', maxlength: '1000', autocomplete: 'off' } });
  const create = h('form', { class: 'grant' }, field('NPC name', newName), field('NPC description', newDescription), h('button', { class: 'primary', text: 'Create NPC', attrs: { type: 'submit' } }));
  create.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (roomId === null) return;
    const body = { name: newName.value, description: newDescription.value || `${newName.value.trim()}, nothing more.`, room_id: roomId };
    const created = await call(api.POST('/api/worlds/{world_id}/npcs', { params: { path: { world_id: worldId } }, body }));
    if (!status.report(created, created.ok ? `${created.data.name} stands here now: write its script below.` : '') || !created.ok) return;
    newName.value = '';
    newDescription.value = '';
    await reload();
    editors.get(created.data.id)?.open();
  });

  return {
    element: h('div', {}, list, create, status.element),
    load: (id) => {
      roomId = id;
      return reload();
    },
  };
}

export interface ScriptErrors {
  element: HTMLElement;
  load(): Promise<void>;
}

/** The world's newest script errors (builders only; players never see them), read again on Refresh. */
export function scriptErrors(worldId: string): ScriptErrors {
  const body = h('tbody');
  const status = statusLine();
  const refresh = h('button', { class: 'small', text: 'Refresh', attrs: { type: 'button', 'aria-label': 'Refresh the script errors' } });
  const table = h(
    'table',
    { class: 'script-errors' },
    h('caption', { class: 'visually-hidden', text: 'Script errors, newest first' }),
    h('thead', {}, h('tr', {}, ...['When', 'Script', 'Hook', 'Line', 'What'].map((title) => h('th', { text: title, attrs: { scope: 'col' } })))),
    body,
  );
  const load = async () => {
    const listed = await call(api.GET('/api/worlds/{world_id}/script-errors', { params: { path: { world_id: worldId }, query: { limit: ERRORS_SHOWN } } }));
    if (!listed.ok) return void status.report(listed, '');
    body.replaceChildren(
      ...listed.data.errors.map((error) => {
        const when = utcDate(error.created_at);
        const valid = !Number.isNaN(when.getTime());
        return h(
          'tr',
          {},
          h('td', {}, h('time', { text: valid ? when.toLocaleString() : error.created_at, attrs: { datetime: valid ? when.toISOString() : '' } })),
          h('td', { text: error.owner }),
          h('td', { text: error.hook }),
          h('td', { text: error.line === null ? '' : String(error.line) }),
          h('td', { class: 'message' }, h('span', { class: 'badge', text: error.kind }), ' ', error.message),
        );
      }),
    );
    if (listed.data.errors.length === 0) body.append(h('tr', {}, h('td', { class: 'muted', text: 'No script errors.', attrs: { colspan: '5' } })));
  };
  refresh.addEventListener('click', () => void load());
  return { element: h('div', {}, h('div', { class: 'errors-head' }, h('p', { class: 'muted', text: `The ${ERRORS_SHOWN} newest, newest first.` }), refresh), h('div', { class: 'table-wrap' }, table), status.element), load };
}
