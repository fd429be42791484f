/**
 * After login: pick a world (with what the account may do there) and a character, or create
 * one. The world list is read again (GET /worlds) whenever the page comes back into view and
 * every half minute, so a world access granted meanwhile shows without logging in again.
 */
import { api, call, saveSession, type Schemas, type Session } from './api.ts';
import { h } from './dom.ts';
import { accountButtons, type Nav, type Screen } from './nav.ts';

type World = Schemas['WorldEntry'];

const WORLDS_REFRESH_MS = 30_000;

const ACCESS_TEXT: Record<World['access_reason'], string> = {
  ok: 'You can enter',
  invite_required: 'Invitation required',
  slot_limit_reached: 'All character slots used',
  world_inactive: 'Closed',
};

function badges(world: World): HTMLElement {
  return h(
    'span',
    { class: 'badges' },
    h('span', { class: `badge ${world.access_mode === 'open' ? 'open' : 'invite'}`, text: world.access_mode === 'open' ? 'Open world' : 'Invite only' }),
    h('span', { class: `badge ${world.can_access ? 'ok' : 'locked'}`, text: ACCESS_TEXT[world.access_reason] }),
    h('span', { class: 'badge', text: `${world.current_character_count}/${world.slot_limit_per_account} characters` }),
  );
}

function worldCard(world: World, onChoose: () => void): HTMLButtonElement {
  return h(
    'button',
    { class: 'world', attrs: { type: 'button', 'aria-pressed': 'false' }, onClick: onChoose },
    h('span', { class: 'world-name', text: world.name }),
    h('span', { class: 'world-description', text: world.description }),
    badges(world),
  );
}

export function lobbyScreen(nav: Nav, session: Session): Screen {
  const characters = h('section', { class: 'card characters', attrs: { 'aria-live': 'polite' } });
  const heading = h('h1', { text: 'Choose a world', attrs: { tabindex: '-1' } });
  const worldList = h('div', { class: 'world-list' });
  let cards: HTMLButtonElement[] = [];
  let chosen: string | undefined;

  const markChosen = () => cards.forEach((card, index) => card.setAttribute('aria-pressed', String(session.worlds[index]!.id === chosen)));
  const renderWorlds = () => {
    cards = session.worlds.map((world) => worldCard(world, () => choose(world)));
    markChosen();
    worldList.replaceChildren(...cards);
  };

  const choose = (world: World) => {
    chosen = world.id;
    markChosen();
    void showCharacters(world);
  };

  /** Reads the world list again; with `reshow`, the chosen world's characters too when what the account may do there changed. */
  const refreshWorlds = async (reshow = true) => {
    const listed = await call(api.GET('/worlds'));
    if (!listed.ok || JSON.stringify(listed.data.worlds) === JSON.stringify(session.worlds)) return;
    const before = session.worlds.find((world) => world.id === chosen);
    const focused = cards.findIndex((card) => card === document.activeElement);
    const focusedId = focused >= 0 ? session.worlds[focused]!.id : undefined;
    session.worlds = listed.data.worlds;
    saveSession(session);
    renderWorlds();
    if (focusedId) cards[session.worlds.findIndex((world) => world.id === focusedId)]?.focus();
    const after = session.worlds.find((world) => world.id === chosen);
    if (reshow && after && (after.can_access !== before?.can_access || after.can_create !== before?.can_create)) void showCharacters(after);
  };

  const showCharacters = async (world: World, notice?: string) => {
    const title = h('h2', { text: `Characters in ${world.name}` });
    const status = h('p', { class: 'form-error', attrs: { role: 'alert', hidden: true } });
    const fail = (detail: string) => {
      status.textContent = detail;
      status.hidden = false;
    };
    if (!world.can_access) {
      const why = world.access_reason === 'invite_required' ? 'This world is open by invitation: ask an administrator for access.' : ACCESS_TEXT[world.access_reason];
      characters.replaceChildren(title, h('p', { class: 'muted', text: why }));
      return;
    }
    characters.replaceChildren(title, h('p', { class: 'muted', text: 'Loading…' }));
    const listed = await call(api.GET('/characters', { params: { query: { world_id: world.id } } }));
    if (!listed.ok) {
      characters.replaceChildren(title, status);
      return fail(listed.detail);
    }
    const list = h('ul', { class: 'character-list' });
    for (const character of listed.data.characters) {
      const play = h('button', { class: 'primary', text: 'Play', attrs: { type: 'button', 'aria-label': `Play as ${character.name}`, 'data-character-id': String(character.id) } });
      play.addEventListener('click', async () => {
        play.disabled = true;
        const selected = await call(api.POST('/characters/select', { body: { character_id: character.id, world_id: world.id } }));
        play.disabled = false;
        if (!selected.ok) return fail(selected.detail);
        saveSession({ ...session, character: { name: selected.data.character_name, worldId: world.id } });
        nav.game();
      });
      list.append(h('li', {}, h('span', { class: 'character-name', text: character.name }), play));
    }
    if (listed.data.characters.length === 0) list.append(h('li', { class: 'muted', text: 'No characters here yet.' }));
    const create = h('button', { text: 'Create a character', attrs: { type: 'button', disabled: !world.can_create } });
    create.addEventListener('click', async () => {
      create.disabled = true;
      const created = await call(api.POST('/characters/create', { body: { world_id: world.id } }));
      create.disabled = false;
      if (!created.ok) return fail(created.detail);
      await refreshWorlds(false);
      await showCharacters(session.worlds.find((w) => w.id === world.id) ?? world, created.data.message);
      // Keyboard users land on the new character's Play button.
      characters.querySelector<HTMLButtonElement>(`[data-character-id="${created.data.character_id}"]`)?.focus();
    });
    const note = world.can_create ? 'New characters get a name from the world.' : world.naming_mode === 'manual' ? 'Characters here are named by the staff.' : 'You cannot create a character here now.';
    characters.replaceChildren(
      title,
      notice ? h('p', { class: 'notice', text: notice, attrs: { role: 'status' } }) : '',
      list,
      h('div', { class: 'create' }, create, h('small', { class: 'muted', text: note })),
      status,
    );
  };

  const element = h(
    'div',
    { class: 'screen' },
    h('header', { class: 'topbar' }, h('span', { class: 'brand small' }, h('span', { class: 'brand-mark', text: '\u25c6', attrs: { 'aria-hidden': 'true' } }), ' MUD'), h('span', { class: 'who-am-i', text: `${session.username} · ${session.role}` }), accountButtons(nav, session)),
    h('main', { class: 'lobby' }, h('section', { class: 'worlds' }, heading, worldList), characters),
  );
  renderWorlds();
  const preferred = session.worlds.find((w) => w.has_existing_character && w.can_access) ?? session.worlds.find((w) => w.can_access) ?? session.worlds[0];
  if (preferred) choose(preferred);

  const onFocus = () => void refreshWorlds();
  const onVisibility = () => {
    if (document.visibilityState === 'visible') void refreshWorlds();
  };
  window.addEventListener('focus', onFocus);
  document.addEventListener('visibilitychange', onVisibility);
  const timer = setInterval(onFocus, WORLDS_REFRESH_MS);
  return {
    element,
    focus: heading,
    dispose: () => {
      window.removeEventListener('focus', onFocus);
      document.removeEventListener('visibilitychange', onVisibility);
      clearInterval(timer);
    },
  };
}
