/**
 * Playing: the room (exits as buttons, items, the players and the NPCs here), the log with
 * chat, the command line (history on ↑/↓, Tab completion), who is online and the inventory,
 * kept current by the live events (live.ts). What an NPC or a room's or item's script says is
 * chat like a player's, marked as theirs (the message's `speaker`).
 */
import { api, call, saveSession, type Schemas, type Session } from './api.ts';
import { attention } from './attention.ts';
import { h } from './dom.ts';
import { connectLive, PRESENCE_EVENT, type LiveState } from './live.ts';
import { accountButtons, type Nav, type Screen } from './nav.ts';
import { announcementLine, chatLine, COMMAND_MAX_LENGTH, commonPrefix, completions, END_TEXT, itemLine, listEntries, mentions, movementLine, utcDate } from './text.ts';

type Room = Schemas['Room'];
type CommandInfo = Schemas['CommandInfo'];

const STATE_TEXT: Record<LiveState, string> = { connecting: 'Connecting…', live: 'Live', polling: 'Polling', away: 'Reconnecting…' };
/** `:waves` is `emote waves`. */
const EMOTE_PREFIX = ':';
/** How close to its end the log counts as showing the newest line. */
const AT_BOTTOM_PX = 48;
/** Up to this width play.css lays the game out for a phone (its 760 px media query)… */
const PHONE_WIDTH_PX = 760;
/** …and a phone screen lower than this has its keyboard open. */
const SHORT_SCREEN_PX = 560;
const MAX_LOG_LINES = 400;
const MAX_HISTORY = 100;

const capitalize = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

/** `2026-11-21 20:21:00` (UTC), or now for events that carry no time, as the player's local time of day. */
function clock(utc?: string): HTMLTimeElement {
  const date = utc === undefined ? new Date() : utcDate(utc);
  const valid = !Number.isNaN(date.getTime());
  return h('time', { text: valid ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : '', attrs: { datetime: valid ? date.toISOString() : '' } });
}

export function gameScreen(nav: Nav, session: Session): Screen {
  const character = session.character!;
  const me = character.name;
  const worldName = session.worlds.find((world) => world.id === character.worldId)?.name ?? character.worldId;
  let room: Room | null = null;
  /** The commands this session may use (GET /commands), for completion and to tell chat from actions. */
  let commands: CommandInfo[] = [];
  let online: string[] = [];
  /** Those online who are link-dead (GET /status, then `presence` events). */
  let linkdead = new Set<string>();
  let inventory: string[] = [];

  // --- layout -------------------------------------------------------------------------------
  const connection = h('span', { class: 'connection', attrs: { role: 'status' } });
  const banner = h('div', { class: 'banner', text: 'The server is away. Reconnecting…', attrs: { role: 'alert', hidden: true } });
  const roomName = h('h2', { attrs: { id: 'room-name' } });
  const roomDescription = h('p', { class: 'description' });
  const exits = h('div', { class: 'exits', attrs: { role: 'group', 'aria-label': 'Exits' } });
  const items = h('ul', { class: 'things' });
  const people = h('ul', { class: 'things' });
  const npcList = h('ul', { class: 'things npcs' });
  const npcBlock = h('div', { attrs: { hidden: true } }, h('h3', { text: 'Also here' }), npcList);
  // The log is a list of lines inside the live region: role=log on the list itself would take its list semantics away.
  const lines = h('ol', { class: 'lines' });
  const log = h('div', { class: 'log', attrs: { role: 'log', 'aria-live': 'polite', 'aria-label': 'What happens', tabindex: '0' } }, lines);
  const command = h('input', {
    attrs: {
      id: 'command',
      type: 'text',
      maxlength: String(COMMAND_MAX_LENGTH),
      autocomplete: 'off',
      autocapitalize: 'none',
      spellcheck: 'false',
      enterkeyhint: 'send',
      placeholder: 'look, north, say hello…',
      'aria-describedby': 'command-hint',
    },
  });
  const hint = h('div', { class: 'hint', attrs: { id: 'command-hint', 'aria-live': 'polite' } });
  const onlineTitle = h('h3', { text: 'Online' });
  const onlineList = h('ul', { class: 'names' });
  const inventoryList = h('ul', { class: 'names' });

  const quick = (label: string, text: string) => h('button', { text: label, attrs: { type: 'button' }, onClick: () => void send(text) });
  const commandForm = h(
    'form',
    { class: 'command', attrs: { autocomplete: 'off' } },
    h('label', { class: 'visually-hidden', text: 'Command', attrs: { for: 'command' } }),
    h('span', { class: 'prompt', text: '›', attrs: { 'aria-hidden': 'true' } }),
    command,
    h('button', { class: 'primary', text: 'Send', attrs: { type: 'submit' } }),
  );
  const switchCharacter = h('button', { class: 'ghost', text: 'Characters', attrs: { type: 'button' } });
  // Back to the character list: the character leaves the world at once, not when the session ends.
  switchCharacter.addEventListener('click', () => void call(api.POST('/characters/deselect', { body: {} })).then(() => nav.lobby()));
  const notices = attention();

  const element = h(
    'div',
    { class: 'screen game-screen' },
    h(
      'header',
      { class: 'topbar' },
      h('h1', { class: 'visually-hidden', text: `${me} in ${worldName}` }),
      h('span', { class: 'brand small' }, h('span', { class: 'brand-mark', text: '\u25c6', attrs: { 'aria-hidden': 'true' } }), ` ${worldName}`),
      h('span', { class: 'who-am-i' }, h('strong', { text: me }), h('span', { class: 'muted', text: ` · ${session.username}` })),
      connection,
      h('div', { class: 'account' }, switchCharacter, accountButtons(nav, session)),
    ),
    banner,
    h(
      'main',
      { class: 'game' },
      // Around the character: the room, who is online, what it carries (on a phone one scrolling
      // area above the log; elsewhere its cards are columns of the grid).
      h(
        'div',
        { class: 'surroundings' },
        h(
          'section',
          { class: 'card room', attrs: { 'aria-labelledby': 'room-name' } },
          roomName,
          roomDescription,
          h('h3', { text: 'Exits' }),
          exits,
          h('div', { class: 'room-lists' }, h('div', {}, h('h3', { text: 'Items here' }), items), h('div', {}, h('h3', { text: 'Players here' }), people), npcBlock),
        ),
        h('aside', { class: 'side' }, h('section', { class: 'card' }, onlineTitle, onlineList), h('section', { class: 'card' }, h('h3', { text: 'Inventory' }), inventoryList)),
      ),
      h(
        'section',
        { class: 'play', attrs: { 'aria-label': 'Play' } },
        log,
        commandForm,
        h(
          'div',
          { class: 'play-footer' },
          h('div', { class: 'quick', attrs: { role: 'group', 'aria-label': 'Quick commands' } }, quick('Look', 'look'), quick('Who', 'who'), quick('Inventory', 'inventory'), quick('Help', 'help')),
          notices.control,
          hint,
        ),
      ),
    ),
  );

  // --- rendering ----------------------------------------------------------------------------
  const renderRoom = () => {
    if (!room) return;
    roomName.textContent = room.name;
    roomDescription.textContent = room.description;
    // An exit button that had the focus (Enter on it moves) gives it on to the new room's.
    const hadFocus = exits.contains(document.activeElement) ? (document.activeElement as HTMLElement).dataset.direction : undefined;
    exits.replaceChildren(
      ...room.exits.map(({ direction, name }) =>
        h(
          'button',
          // The name is the button's text, "North to Ropewalk Bridge", so it says what it shows.
          { class: 'exit', attrs: { type: 'button', 'data-direction': direction }, onClick: () => void send(direction) },
          h('span', { class: 'direction', text: capitalize(direction) }),
          h('span', { class: 'visually-hidden', text: ' to ' }),
          h('span', { class: 'to', text: name }),
        ),
      ),
    );
    if (room.exits.length === 0) exits.append(h('p', { class: 'muted', text: 'No way out.' }));
    if (hadFocus !== undefined) {
      const buttons = [...exits.querySelectorAll<HTMLButtonElement>('button.exit')];
      (buttons.find((b) => b.dataset.direction === hadFocus) ?? buttons[0] ?? command).focus();
    }
    items.replaceChildren(
      ...room.items.map(({ name }) =>
        h('li', {}, h('span', { text: name }), h('button', { class: 'small', text: 'Take', attrs: { type: 'button', 'aria-label': `Take ${name}` }, onClick: () => void send(`get ${name}`) })),
      ),
    );
    if (room.more_items > 0) items.append(h('li', { class: 'muted', text: `and ${room.more_items.toLocaleString('en-US')} more` }));
    if (room.items.length === 0) items.append(h('li', { class: 'muted', text: 'Nothing.' }));
    people.replaceChildren(
      ...room.characters.map(({ name, linkdead }) =>
        h('li', {}, h('span', {}, name, ...(linkdead ? [h('span', { class: 'muted', text: ' (link-dead)' })] : [])), h('button', { class: 'small', text: 'Whisper', attrs: { type: 'button', 'aria-label': `Whisper to ${name}` }, onClick: () => prefill(`whisper ${name} `) })),
      ),
    );
    if (room.more_characters > 0) people.append(h('li', { class: 'muted', text: `and ${room.more_characters.toLocaleString('en-US')} more` }));
    if (room.characters.length === 0) people.append(h('li', { class: 'muted', text: 'Nobody else.' }));
    // NPCs under the game's own heading for them (look's `[Also here]`), only when there are any.
    npcList.replaceChildren(
      ...room.npcs.map(({ name }) =>
        h('li', {}, h('span', { text: name }), h('button', { class: 'small', text: 'Examine', attrs: { type: 'button', 'aria-label': `Examine ${name}` }, onClick: () => void send(`examine ${name}`) })),
      ),
    );
    if (room.more_npcs > 0) npcList.append(h('li', { class: 'muted', text: `and ${room.more_npcs.toLocaleString('en-US')} more` }));
    npcBlock.hidden = room.npcs.length === 0;
  };

  const renderSide = () => {
    onlineTitle.textContent = `Online (${online.length})`;
    onlineList.replaceChildren(
      ...online.map((name) =>
        name === me
          ? h('li', { class: 'me', text: `${name} (you)` })
          : linkdead.has(name)
            ? h('li', { class: 'linkdead' }, name, h('span', { class: 'muted', text: ' (link-dead)' }))
            : h('li', { text: name }),
      ),
    );
    inventoryList.replaceChildren(
      ...inventory.map((item) =>
        h('li', {}, h('span', { text: item }), h('button', { class: 'small', text: 'Drop', attrs: { type: 'button', 'aria-label': `Drop ${item}` }, onClick: () => void send(`drop ${item}`) })),
      ),
    );
    if (inventory.length === 0) inventoryList.append(h('li', { class: 'muted', text: 'Empty-handed.' }));
  };

  // The log follows its newest line unless the player scrolled up to read; a change of its
  // size (the phone's keyboard, the banner, a rotation) keeps whichever it was.
  let following = true;
  const toNewest = () => {
    log.scrollTop = log.scrollHeight;
  };
  log.addEventListener('scroll', () => {
    following = log.scrollHeight - log.scrollTop - log.clientHeight < AT_BOTTOM_PX;
  });
  const resizes = new ResizeObserver(() => {
    if (following) toNewest();
  });
  resizes.observe(log);

  // The visual viewport is what the keyboard leaves of the screen (also where the layout
  // viewport keeps its height, as on iOS).
  const viewport = window.visualViewport;
  const fit = () => {
    const height = viewport?.height ?? window.innerHeight;
    document.documentElement.style.setProperty('--app-height', `${Math.round(height)}px`);
    document.documentElement.classList.toggle('short-screen', height < SHORT_SCREEN_PX && window.innerWidth <= PHONE_WIDTH_PX);
  };
  fit();
  (viewport ?? window).addEventListener('resize', fit);
  const addLine = (line: HTMLLIElement) => {
    lines.append(line);
    while (lines.childElementCount > MAX_LOG_LINES) lines.firstElementChild!.remove();
    if (following) toNewest();
  };
  /** A line of what happened around the character (arrivals, items), with the time it was heard. */
  const happened = (kind: string, text: string) => addLine(h('li', { class: `line ${kind}` }, clock(), h('span', { class: 'text', text })));
  const write = (kind: string, text: string) => addLine(h('li', { class: `line ${kind}`, text }));

  const showRoomInLog = (shown: Room) =>
    addLine(h('li', { class: 'line room-entry' }, h('strong', { text: shown.name }), h('span', { text: shown.description })));

  const setRoom = (next: Room) => {
    room = next;
    renderRoom();
  };

  /** Whether builders changed the room itself (name, description, exits), not who or what is in it. */
  const rebuilt = (before: Room, after: Room) =>
    before.id === after.id &&
    (before.name !== after.name || before.description !== after.description || before.exits.map((e) => `${e.direction}>${e.to}:${e.name}`).join() !== after.exits.map((e) => `${e.direction}>${e.to}:${e.name}`).join());

  // --- talking to the server ----------------------------------------------------------------
  const refreshStatus = async () => {
    const status = await call(api.GET('/status/{session_id}', { params: { path: { session_id: session.id } } }));
    if (!status.ok) return;
    online = status.data.active_players;
    linkdead = new Set(status.data.linkdead_players);
    inventory = listEntries(status.data.inventory);
    renderSide();
  };

  /** Reads the room; into the log too on entering (after being away and after item changes, the card alone). */
  const refreshRoom = async (intoLog = false) => {
    const look = await call(api.POST('/command', { body: { command: 'look' } }));
    if (look.ok) {
      const shown = look.data.room;
      if (!shown) return;
      setRoom(shown);
      if (intoLog) showRoomInLog(shown);
    } else if (look.status === 409) nav.lobby();
  };

  const send = async (text: string) => {
    const line = text.trim().replace(/^\//, '');
    const verb = line.startsWith(EMOTE_PREFIX) ? 'emote' : line.split(/\s+/)[0]!.toLowerCase();
    const known = commands.find((c) => c.name === verb || c.aliases.includes(verb));
    // Talking is answered by its chat message (an event, or the next poll), which shows the
    // words once: neither the typed line nor the reply is written too (docs/decisions.md).
    const chat = known?.section === 'Communication';
    if (!chat) write('echo', text);
    const result = await call(api.POST('/command', { body: { command: text } }));
    // A chat command's words come back as its chat message; only a refused one shows what was typed.
    if (chat && !(result.ok && result.data.success)) write('echo', text);
    if (!result.ok) {
      if (result.status === 409) return nav.lobby();
      return write('error', result.detail);
    }
    const { success, message } = result.data;
    if (success && chat) {
      // The words come back as a chat event; a line after them is news for the speaker (a tell to someone away).
      const note = message.split('\n').slice(1).join('\n');
      if (note) write('reply', note);
      return live.poke();
    }
    const shown = result.data.room;
    if (shown) {
      // The answer's first line is what happened ("You move north."); the room follows it.
      const lead = message.split('\n')[0]!;
      if (lead) write(success ? 'reply' : 'error', lead);
      setRoom(shown);
      showRoomInLog(shown);
    } else write(success ? 'reply' : 'error', verb === 'who' && success ? `${message}\n(and you, ${me})` : message);
    // An action that shows no room may have changed what lies here or is carried (get, drop).
    if (success && !shown && known?.section === 'Actions') await Promise.all([refreshRoom(), refreshStatus()]);
    if (success && verb === 'who') await refreshStatus();
  };

  // --- the command line ---------------------------------------------------------------------
  const history: string[] = [];
  let historyIndex = 0;
  let cycle: { candidates: string[]; index: number } | null = null;

  const prefill = (text: string) => {
    command.value = text;
    command.focus();
  };

  const complete = (): boolean => {
    if (cycle && command.value === cycle.candidates[cycle.index]) {
      cycle.index = (cycle.index + 1) % cycle.candidates.length;
      command.value = cycle.candidates[cycle.index]!;
      return true;
    }
    const candidates = completions(command.value, {
      commands,
      exits: room?.exits.map((exit) => exit.direction) ?? [],
      items: room?.items.map((item) => item.name) ?? [],
      inventory,
      people: [...(room?.characters.map((c) => c.name) ?? []), ...online.filter((name) => name !== me)],
    });
    if (candidates.length === 0) return false;
    const shared = commonPrefix(candidates);
    if (candidates.length > 1) hint.textContent = `Tab: ${candidates.map((c) => c.trim()).join(' · ')}`;
    else hint.textContent = '';
    if (candidates.length === 1 || shared.length <= command.value.length) {
      cycle = { candidates, index: 0 };
      command.value = candidates[0]!;
    } else command.value = shared;
    return true;
  };

  command.addEventListener('keydown', (event) => {
    if (event.key === 'Tab' && !event.shiftKey && !event.altKey && !event.ctrlKey) {
      // With something typed, Tab completes and stays; on an empty line it moves on, so focus never gets stuck.
      if (command.value.trim() === '') return;
      event.preventDefault();
      if (!complete()) hint.textContent = 'Nothing to complete.';
      return;
    }
    cycle = null;
    if (event.key === 'ArrowUp' && historyIndex > 0) {
      event.preventDefault();
      command.value = history[--historyIndex]!;
    } else if (event.key === 'ArrowDown' && historyIndex < history.length) {
      event.preventDefault();
      command.value = ++historyIndex === history.length ? '' : history[historyIndex]!;
    } else if (event.key === 'Escape') {
      command.value = '';
      hint.textContent = '';
    }
  });

  commandForm.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = command.value.trim();
    if (text === '') return;
    if (history.at(-1) !== text) history.push(text);
    if (history.length > MAX_HISTORY) history.shift();
    historyIndex = history.length;
    command.value = '';
    hint.textContent = '';
    void send(text);
  });

  // --- live events --------------------------------------------------------------------------
  let state: LiveState = 'connecting';
  const live = connectLive(session.id, {
    chat: (message) => {
      const line = chatLine(message, me);
      const said = line.action ? [] : [h('span', { class: 'speaker', text: `${line.speaker}:` }), ' '];
      // What an NPC or a room's or item's script says carries its mark as a badge, the words the
      // telnet door prints ("NPC", "Room"), so a screen reader says it too; play.css sets the
      // script's narration apart as well.
      const badge = line.mark === null ? [] : [h('span', { class: `badge ${message.speaker}`, text: line.mark }), ' '];
      const from = message.speaker ? ` from-${message.speaker}` : '';
      addLine(h('li', { class: `line chat ${line.channel}${from}` }, clock(message.created_at), ...badge, ...said, h('span', { class: 'text', text: line.text })));
      if (!line.mine) notices.notice(message.recipient === me || mentions(line.text, me));
    },
    arrive: (event) => {
      if (room && event.npc) {
        const id = event.npc_id ?? '';
        if (!room.npcs.some((npc) => npc.id === id)) room.npcs.push({ id, name: event.character });
      } else if (room && event.character !== me && !room.characters.some((c) => c.name === event.character)) room.characters.push({ name: event.character, linkdead: false });
      renderRoom();
      happened(event.npc ? 'movement from-npc' : 'movement', movementLine('arrive', event.character, event.direction, event.cause));
    },
    leave: (event) => {
      if (room && event.npc) {
        const index = room.npcs.findIndex((npc) => npc.id === event.npc_id);
        if (index >= 0) room.npcs.splice(index, 1);
      } else if (room) room.characters = room.characters.filter((c) => c.name !== event.character);
      renderRoom();
      happened(event.npc ? 'movement from-npc' : 'movement', movementLine('leave', event.character, event.direction, event.cause));
    },
    item: (event) => {
      if (room && (event.action === 'take' || event.action === 'vanish')) {
        const index = room.items.findIndex((item) => item.name === event.item);
        if (index >= 0) room.items.splice(index, 1);
      } else room?.items.push({ name: event.item });
      renderRoom();
      happened('movement', itemLine(event));
    },
    presence: (event) => {
      online = event.online ? [...new Set([...online, event.character])].sort() : online.filter((name) => name !== event.character);
      // Link-dead or back (issue 35): the room's list and the Online list say so at once.
      if (event.linkdead && event.online) linkdead.add(event.character);
      else linkdead.delete(event.character);
      const here = room?.characters.find((c) => c.name === event.character);
      if (here) {
        here.linkdead = linkdead.has(event.character);
        renderRoom();
      }
      renderSide();
      // The staff view, when open, reads who is playing again.
      document.dispatchEvent(new CustomEvent(PRESENCE_EVENT));
    },
    room: (event) => {
      const before = room;
      setRoom(event.room);
      // Builders changed the room the character stands in: the log says so, with the room as it is now.
      if (before && rebuilt(before, event.room)) {
        write('system', 'The room changes around you.');
        showRoomInLog(event.room);
      }
    },
    announcement: (event) => {
      addLine(h('li', { class: 'line announcement' }, clock(event.sent_at), h('span', { class: 'text', text: announcementLine(event) })));
      // The staff address everyone: it counts and sounds like a message to the character.
      notices.notice(true);
    },
    ended: (reason) => nav.ended(END_TEXT[reason]),
    state: (next) => {
      if (next === 'away' && (state === 'live' || state === 'polling')) write('system', 'Disconnected. Reconnecting…');
      state = next;
      connection.textContent = STATE_TEXT[next];
      connection.dataset.state = next;
      banner.hidden = next !== 'away';
    },
    resumed: () => {
      write('system', 'Connected again.');
      void refreshRoom();
      void refreshStatus();
    },
  });

  write('system', `Welcome to ${worldName}, ${me}. Type help for the commands; Tab completes verbs, directions and names, ↑ and ↓ recall what you typed.`);
  if (session.guestNotice) {
    write('notice', session.guestNotice);
    saveSession({ ...session, guestNotice: undefined });
  }
  /** The session is over: the log stays to be read (and copied), the command line goes. */
  let ended = false;
  const end = (detail: string) => {
    if (ended) return;
    ended = true;
    live.stop();
    notices.dispose();
    const again = h('button', { class: 'primary', text: 'Log in again', attrs: { type: 'button' }, onClick: () => nav.auth() });
    const heading = h('h2', { text: 'Session ended', attrs: { tabindex: '-1' } });
    commandForm.replaceWith(h('section', { class: 'card ended-here', attrs: { role: 'alert' } }, heading, h('p', { text: detail }), again));
    element.querySelector('.play-footer')?.remove();
    banner.hidden = true;
    connection.textContent = 'Ended';
    connection.dataset.state = 'ended';
    switchCharacter.remove();
    element.querySelector('.account')?.remove();
    again.focus();
  };

  renderSide();
  void refreshRoom(true);
  void call(api.GET('/commands/{session_id}', { params: { path: { session_id: session.id } } })).then((listed) => {
    if (listed.ok) commands = listed.data.commands;
  });
  void refreshStatus();
  return {
    element,
    focus: command,
    dispose: () => {
      live.stop();
      resizes.disconnect();
      (viewport ?? window).removeEventListener('resize', fit);
      document.documentElement.classList.remove('short-screen');
      notices.dispose();
    },
    end,
  };
}
