/**
 * One way into the game for every door (issue 31): the same line gives the same answer over
 * HTTP (POST /command) and over telnet, for every verb GET /commands lists; the telnet door
 * shows it as its terminal renders any text. Each verb runs on both doors from the same state:
 * the game is reset between the two, and the same character plays, alone but for a listener.
 */
import { describe, it, before } from 'mocha';
import { expect } from 'chai';
import { usePostgres } from '../helpers/test-server.ts';
import { oneServer } from '../helpers/suite-servers.ts';
import { TelnetClient } from '../helpers/telnet-client.ts';
import { createUser, GOOD_PASSWORD, login } from '../helpers/accounts.ts';
import { cmd, loginAs, registerGuest, resetGame, selectCharacter, uniqueName, wroteBehindServer } from '../helpers/players.ts';
import { Terminal } from '../../src/telnet/render.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';
const WIDTH = 1000;

describe(`the doors answer alike (${DB_NAME})`, function () {
  this.timeout(120_000);
  const server = oneServer({ env: { MUD_TELNET_ENABLED: 'true', MUD_TELNET_PORT: '0' } });
  let username: string;
  let characterId: number;
  let listener: { name: string; username: string; characterId: number };
  /** Telnet's rendering of a text, with the client's width and no colours. */
  const terminal = Object.assign(new Terminal(), { width: WIDTH, colour: false });

  before(async () => {
    username = 'doormason';
    await createUser(server(), username, 'worldbuilder');
    const session = await login(server(), username);
    const created = await server().post('/characters/create', { world_id: 'emberwick' }, { Authorization: `Bearer ${session}` });
    characterId = created.body.character_id as number;
    const name = uniqueName('Bert');
    listener = { name, ...(await registerGuest(server(), name)) };
  });

  /** The game as it starts: items where the world puts them, no chat, no sessions; the character at the spawn, its listener online beside it. */
  const fresh = async (): Promise<void> => {
    await resetGame(server());
    await server().db('characters').whereIn('id', [characterId, listener.characterId]).update({ room_id: 'lockkeepers_square' });
    await selectCharacter(server(), await loginAs(server(), listener.username), listener.characterId);
    await wroteBehindServer(server());
  };

  const overHttp = async (line: string) => {
    await fresh();
    const session = await login(server(), username);
    await selectCharacter(server(), session, characterId);
    return cmd({ server: server(), name: '', username, characterId, sessionId: session }, line);
  };

  const overTelnet = async (line: string, expected: string): Promise<string> => {
    await fresh();
    const client = await TelnetClient.connect(server().telnet!.port, { width: WIDTH });
    try {
      await client.read('Username: ');
      client.line('colour off');
      await client.read('Username: ');
      client.line(`connect ${username} ${GOOD_PASSWORD}`);
      await client.read('Type play');
      client.line('play 1');
      // The room it stands in, to its prompt: a telnet-only decoration that follows each answer
      // and must leave the answer's text alone (issue 35).
      await client.read('[Exits]:');
      await client.prompted();
      client.line(line);
      return await client.read(expected, 5000).catch(() => client.all.slice(-2000));
    } finally {
      client.line('quit');
      client.close();
    }
  };

  /** A line for each verb, chosen so that both doors meet the same state and the answer tells something. */
  const lines = (bert: string): Record<string, string> => ({
    north: 'north',
    south: 'south',
    east: 'east',
    west: 'west',
    up: 'up',
    down: 'down',
    look: 'look',
    inventory: 'inventory',
    get: 'get canal penny',
    drop: 'drop canal penny',
    recall: 'recall',
    say: 'say Good morning to all',
    yell: 'yell Fire on the wharf',
    whisper: `whisper ${bert} the bridge at dusk`,
    who: 'who',
    help: 'help',
    go: 'go east',
    exits: 'exits',
    examine: 'examine canal penny',
    emote: 'emote tips a hat',
    tell: `tell ${bert} see you later`,
    ooc: 'ooc brb',
    ignore: 'ignore',
    unignore: `unignore ${bert}`,
    report: `report ${bert} shouting in the square`,
    '@dig': '@dig sideways Hall',
    '@name': "@name Lockkeeper's Square",
    '@desc': '@desc Worn cobbles slope down to the lock, slick with canal mist.',
    '@exit': '@exit north tinkers_wharf',
    '@unexit': '@unexit up',
    '@create': `@create ${'x'.repeat(101)}`,
    '@idesc': '@idesc nothing at all',
    '@destroy': '@destroy nothing',
    '@rooms': '@rooms',
    '@npc': '@npc',
    '@script': '@script errors',
  });

  it('every verb a builder may use answers the same line alike on HTTP and telnet', async () => {
    const session = await login(server(), username);
    const listed = (await server().get(`/commands/${session}`)).body.commands as Array<{ name: string }>;
    const samples = lines(listener.name);
    expect(listed.map((c) => c.name).filter((name) => samples[name] === undefined), 'a line for every verb').to.deep.equal([]);
    for (const { name } of listed) {
      const line = samples[name]!;
      const http = await overHttp(line);
      const shown = terminal.text(http.message);
      const telnet = await overTelnet(line, shown);
      // Telnet's help adds the door's own commands after the game's.
      expect(telnet, `${name}: ${line}`).to.equal(shown);
    }
  });
});
