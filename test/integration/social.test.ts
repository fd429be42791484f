/**
 * The social verbs (docs/decisions.md, "Social verbs") through the real stack: the command's
 * answer, the event stream (`chat` events with their channel), GET /chat history, who may read
 * what, and the ooc channel's own limit.
 */
import { describe, it, afterEach } from 'mocha';
import { expect } from 'chai';
import { usePostgres } from '../helpers/test-server.ts';
import { oneServer } from '../helpers/suite-servers.ts';
import { cmd, loginAs, newPlayer, okCmd, selectCharacter, type Player } from '../helpers/players.ts';
import { openStream, type SseStream } from '../helpers/sse.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const SPAWN = 'lockkeepers_square';

describe(`social verbs (${DB_NAME})`, function () {
  const server = oneServer({ reset: true });
  const open: SseStream[] = [];
  const listen = async (player: Player): Promise<SseStream> => {
    const stream = await openStream(`${player.server.url}/events/${player.sessionId}`);
    open.push(stream);
    expect(stream.status).to.equal(200);
    return stream;
  };
  const chatOf = async (player: Player): Promise<{ chat: string; messages: Array<{ sender: string; text: string; channel: string; recipient: string | null }> }> => {
    const res = await server().get(`/chat/${player.sessionId}`);
    expect(res.status, res.text).to.equal(200);
    return res.body;
  };
  const expectFail = async (player: Player, command: string, message: string) => {
    expect(await cmd(player, command)).to.deep.equal({ success: false, message });
  };

  afterEach(() => {
    open.splice(0).forEach((s) => s.close());
  });

  describe('emote, pose and :', () => {
    it('reach the room as "<name> <action>." (event and /chat), not another room', async () => {
      const a = await newPlayer(server(), 'Wren', SPAWN);
      const b = await newPlayer(server(), 'Mara', SPAWN);
      const far = await newPlayer(server(), 'Far', 'ropewalk_bridge');
      const here = await listen(b);
      const away = await listen(far);
      expect(await okCmd(a, 'emote waves')).to.equal(`${a.name} waves.`);
      const event = (await here.nextOf('chat')).data;
      expect(event).to.include({ sender: a.name, text: `${a.name} waves.`, channel: 'emote', recipient: null });
      expect(await okCmd(a, ':bows deeply!')).to.equal(`${a.name} bows deeply!`);
      expect((await here.nextOf('chat')).data.text).to.equal(`${a.name} bows deeply!`);
      // Stored and answered HTML-escaped, as say is.
      expect(await okCmd(a, "/pose 's eyes gleam")).to.equal(`${a.name}&#x27;s eyes gleam.`);
      expect(await okCmd(a, ': grins <b>')).to.equal(`${a.name} grins &lt;b&gt;.`);
      const chat = await chatOf(b);
      expect(chat.messages.map((m) => [m.channel, m.text])).to.deep.equal([
        ['emote', `${a.name} waves.`],
        ['emote', `${a.name} bows deeply!`],
        ['emote', `${a.name}&#x27;s eyes gleam.`],
        ['emote', `${a.name} grins &lt;b&gt;.`],
      ]);
      // The text form reads as the action, without "name:".
      expect(chat.chat).to.equal(`[Recent messages]:\n${a.name} waves.\n${a.name} bows deeply!\n${a.name}&#x27;s eyes gleam.\n${a.name} grins &lt;b&gt;.\n`);
      // Far's own say comes after anything the emotes sent there.
      await okCmd(far, 'say over here');
      expect((await away.until('chat', (e) => e.data.text === 'over here')).filter((e) => e.event === 'chat')).to.deep.equal([]);
      expect((await chatOf(far)).messages.map((m) => m.text)).to.deep.equal(['over here']);
    });

    it('without an action: "Emote what?"', async () => {
      const a = await newPlayer(server(), 'Wren');
      await expectFail(a, 'emote', 'Emote what?');
      await expectFail(a, 'pose   ', 'Emote what?');
      await expectFail(a, ':', 'Emote what?');
    });
  });

  describe('tell', () => {
    it('reaches one character anywhere in the world, live and in its /chat after moving; a third player sees nothing', async () => {
      const a = await newPlayer(server(), 'Wren', SPAWN);
      const b = await newPlayer(server(), 'Mara Vell', 'ropewalk_bridge');
      const c = await newPlayer(server(), 'Third', 'ropewalk_bridge');
      const bStream = await listen(b);
      const cStream = await listen(c);
      expect(await okCmd(a, `tell ${b.name} meet me at the <bridge>`)).to.equal(`You tell ${b.name}: meet me at the &lt;bridge&gt;`);
      const event = (await bStream.nextOf('chat')).data;
      expect(event).to.include({ sender: a.name, channel: 'tell', recipient: b.name, text: `[TELL: ${a.name} \u2192 ${b.name}] meet me at the &lt;bridge&gt;` });
      // Third's own say comes after anything the tell sent there.
      await okCmd(c, 'say who goes there');
      expect((await cStream.until('chat', (e) => e.data.text === 'who goes there')).filter((e) => e.event === 'chat')).to.deep.equal([]);
      expect((await chatOf(c)).messages.map((m) => m.text)).to.deep.equal(['who goes there']);
      // It stays in the recipient's and the sender's chat wherever they go.
      await okCmd(b, 'south');
      await okCmd(a, 'east');
      expect((await chatOf(b)).messages.map((m) => m.channel)).to.deep.equal(['tell']);
      expect((await chatOf(a)).messages.map((m) => m.recipient)).to.deep.equal([b.name]);
    });

    it('to a character not in the world: it waits in their chat', async () => {
      const a = await newPlayer(server(), 'Wren');
      const b = await newPlayer(server(), 'Sleeper');
      await server().post('/logout', { session_id: b.sessionId });
      expect(await okCmd(a, `tell ${b.name} wake up`)).to.equal(`You tell ${b.name}: wake up\n${b.name} is not in the world now: it waits in their chat.`);
      const back = { ...b, sessionId: await loginAs(server(), b.username) };
      await selectCharacter(server(), back.sessionId, b.characterId);
      const chat = await chatOf(back);
      expect(chat.messages.map((m) => [m.sender, m.channel, m.recipient])).to.deep.equal([[a.name, 'tell', b.name]]);
      expect(chat.chat).to.equal(`[Recent messages]:\n${a.name}: [TELL: ${a.name} \u2192 ${b.name}] wake up\n`);
    });

    it('clear answers: nobody by that name, no message, no name, oneself', async () => {
      const a = await newPlayer(server(), 'Wren');
      await expectFail(a, 'tell Nobody Here hello', "Nobody in this world is called 'Nobody'.");
      await expectFail(a, 'tell', 'Tell whom? Usage: /tell <player> <message>');
      await expectFail(a, `tell ${a.name}`, 'Tell what? Usage: /tell <player> <message>');
      await expectFail(a, `tell ${a.name} hi`, 'You cannot tell yourself.');
    });
  });

  describe('ooc', () => {
    it('reaches every player of the world wherever they are, as typed (escaped), in /chat too', async () => {
      const a = await newPlayer(server(), 'Wren', SPAWN);
      const b = await newPlayer(server(), 'Mara', 'weathercock_ledge');
      const stream = await listen(b);
      expect(await okCmd(a, 'ooc brb, dinner & stuff')).to.equal('You say out of character: brb, dinner &amp; stuff');
      expect((await stream.nextOf('chat')).data).to.include({ sender: a.name, channel: 'ooc', recipient: null, text: '[OOC] brb, dinner &amp; stuff' });
      expect((await chatOf(b)).messages.map((m) => m.channel)).to.deep.equal(['ooc']);
      await expectFail(a, 'ooc', 'Say what out of character?');
    });
  });

  describe('examine, look <target>, exits, go', () => {
    it('an item here or carried: its description from the world; another player: name and what they carry', async () => {
      const a = await newPlayer(server(), 'Wren', 'ropewalk_bridge');
      const b = await newPlayer(server(), 'Mara', 'ropewalk_bridge');
      const rope = "[Hemp Rope Coil]\nA neat coil of tarred towing rope, stiff with canal grime but still strong enough to haul a barge.";
      expect(await okCmd(a, 'examine hemp rope coil')).to.equal(rope);
      expect(await okCmd(a, 'look Hemp Rope Coil')).to.equal(rope);
      expect(await okCmd(a, 'exa HEMP ROPE COIL')).to.equal(rope);
      await okCmd(b, 'get hemp rope coil');
      await expectFail(a, 'examine hemp rope coil', "There is no 'hemp rope coil' here.");
      expect(await okCmd(b, 'examine Hemp Rope Coil')).to.equal(rope);
      expect(await okCmd(a, `look ${b.name}`)).to.equal(`${b.name} is here.\nThey carry: Hemp Rope Coil.`);
      expect(await okCmd(b, `examine ${a.name.toLowerCase()}`)).to.equal(`${a.name} is here.\nThey carry nothing.`);
      await expectFail(a, 'examine', 'Examine what?');
      // Someone elsewhere is not here.
      const c = await newPlayer(server(), 'Elsewhere', SPAWN);
      await expectFail(a, `examine ${c.name}`, `There is no '${c.name}' here.`);
    });

    it('exits lists the ways out; go takes a direction or its short form', async () => {
      const a = await newPlayer(server(), 'Wren', SPAWN);
      expect(await okCmd(a, 'exits')).to.equal("[Exits]:\n  - north: Ropewalk Bridge\n  - east: Chandler's Row\n  - west: Tinker's Wharf\n");
      const moved = await okCmd(a, 'go north');
      expect(moved.startsWith('You move north.\n\n=== Ropewalk Bridge ===')).to.equal(true);
      expect((await okCmd(a, 'go S')).startsWith('You move south.')).to.equal(true);
      await expectFail(a, 'go up', 'You cannot move up from here.');
      await expectFail(a, 'go sideways', "'sideways' is not a direction. Directions: north, south, east, west, up, down.");
      await expectFail(a, 'go', 'Go where? Usage: /go <direction>');
    });

    it('help lists every social verb', async () => {
      const a = await newPlayer(server(), 'Wren');
      const help = await okCmd(a, 'help');
      for (const line of [
        '  /go <direction> - Move in a direction (north, n, up, ...)',
        '  /exits - List the ways out of this room',
        '  /examine <item|player>, /exa, /look <item|player> - Look closely at an item here or carried, or at a player here',
        '  /emote <action>, /pose <action>, :<action> - Act in the room (:waves shows "<you> waves.")',
        '  /tell <player> <message> - Private message to a player anywhere in this world (waits in their chat if away)',
        '  /ooc <message> - Out-of-character message to the whole world (never translated)',
      ]) {
        expect(help.split('\n'), line).to.include(line);
      }
    });
  });
});

describe(`ooc has its own limit (${DB_NAME})`, function () {
  const server = oneServer({ env: { MUD_RATE_LIMIT_ENABLED: 'true', MUD_RATE_LIMIT_OOC_PER_CHARACTER: '2', MUD_RATE_LIMIT_OOC_WINDOW_SECONDS: '60' } });

  it('past ooc_per_character: 429 with Retry-After, while other commands still work; the next window allows it again', async () => {
    const a = await newPlayer(server(), 'Wren');
    await okCmd(a, 'ooc one');
    await okCmd(a, 'ooc two');
    const refused = await server().post('/command', { session_id: a.sessionId, command: 'ooc three' });
    expect(refused.status).to.equal(429);
    expect(refused.body.detail).to.match(/^Too many out-of-character messages\. Try again in \d+ seconds\.$/);
    expect(Number(refused.headers.get('retry-after'))).to.be.within(1, 60);
    await okCmd(a, 'say still here');
    const chat = (await server().get(`/chat/${a.sessionId}`)).body.messages.map((m: { text: string }) => m.text);
    expect(chat).to.deep.equal(['[OOC] one', '[OOC] two', 'still here']);
    server().clock.advance(61_000);
    await okCmd(a, 'ooc three');
  });
});
