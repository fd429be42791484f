/**
 * The play client's reading of the game's texts (web/text.ts), against what the real game
 * answers: inventories, chat prefixes, and the Tab completion built on GET /commands.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { startTestServer, type TestServer } from '../helpers/test-server.ts';
import { newPlayer, okCmd, statusOf } from '../helpers/players.ts';
import { chatText } from '../../src/shared/event-text.ts';
import { chatLine, COMMAND_MAX_LENGTH, commonPrefix, completions, decodeEntities, itemLine, listEntries, mentions, movementLine, utcDate } from '../../web/text.ts';
import { loadContract } from '../../src/http/support/openapi.ts';

describe('play client: reading the game texts (web/text.ts)', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(async () => {
    await server.close();
  });

  it('reads the inventory of GET /status', async () => {
    const anna = await newPlayer(server, 'Anna', 'lockkeepers_square');
    expect(listEntries((await statusOf(anna)).inventory)).to.deep.equal([]);
    await okCmd(anna, 'get Canal Penny');
    expect(listEntries((await statusOf(anna)).inventory)).to.deep.equal(['Canal Penny']);
  });

  it('decodes the escaped chat text once, and tells the channels apart', () => {
    expect(decodeEntities('&lt;img src=x onerror=alert(1)&gt; &amp;lt; &quot;&#x27;')).to.equal('<img src=x onerror=alert(1)> &lt; "\'');
    const base = { id: 1, recipient: null, created_at: '2026-11-21 20:21:00' };
    expect(chatLine({ ...base, sender: 'Mara Vell', text: 'hi &amp; bye', channel: 'say' }, 'Wren Ashdown')).to.deep.equal({ channel: 'say', speaker: 'Mara Vell says', text: 'hi & bye', action: false, mine: false, mark: null });
    expect(chatLine({ ...base, sender: 'Mara Vell', text: '[YELL] LOUD', channel: 'yell' }, 'Mara Vell')).to.deep.equal({ channel: 'yell', speaker: 'You yell', text: 'LOUD', action: false, mine: true, mark: null });
    const whisper = { ...base, sender: 'Mara Vell', text: '[WHISPER: Mara Vell \u2192 Wren Ashdown] psst', channel: 'whisper' as const, recipient: 'Wren Ashdown' };
    expect(chatLine(whisper, 'Wren Ashdown')).to.deep.equal({ channel: 'whisper', speaker: 'Mara Vell whispers to you', text: 'psst', action: false, mine: false, mark: null });
    expect(chatLine(whisper, 'Mara Vell').speaker).to.equal('You whisper to Wren Ashdown');
    // The social channels: an emote is its whole line; tell and ooc lose their prefixes.
    const emote = chatLine({ ...base, sender: 'Mara Vell', text: 'Mara Vell&#x27;s eyes gleam.', channel: 'emote' }, 'Wren Ashdown');
    expect(emote).to.deep.equal({ channel: 'emote', speaker: 'Mara Vell', text: "Mara Vell's eyes gleam.", action: true, mine: false, mark: null });
    expect(chatText(emote)).to.equal("Mara Vell's eyes gleam.");
    const tell = { ...base, sender: 'Mara Vell', text: '[TELL: Mara Vell \u2192 Wren Ashdown] meet me', channel: 'tell' as const, recipient: 'Wren Ashdown' };
    expect(chatText(chatLine(tell, 'Wren Ashdown'))).to.equal('Mara Vell tells you: meet me');
    expect(chatText(chatLine(tell, 'Mara Vell'))).to.equal('You tell Wren Ashdown: meet me');
    expect(chatText(chatLine({ ...base, sender: 'Mara Vell', text: '[OOC] brb', channel: 'ooc' }, 'Wren Ashdown'))).to.equal('Mara Vell (OOC): brb');
    // An NPC's or a room's words are marked first, even under the reader's own name.
    const npc = chatLine({ ...base, sender: 'Wren Ashdown', text: 'It was me', channel: 'say', speaker: 'npc' }, 'Wren Ashdown');
    expect(npc).to.deep.equal({ channel: 'say', speaker: 'Wren Ashdown says', text: 'It was me', action: false, mine: false, mark: 'NPC' });
    expect(chatText(npc)).to.equal('[NPC] Wren Ashdown says: It was me');
    expect(chatText(chatLine({ ...base, sender: 'Heron Yard', text: 'The bell clangs.', channel: 'emote', speaker: 'world' }, 'Wren Ashdown'))).to.equal('[Room] The bell clangs.');
  });

  it("knows the contract's command length, the API's UTC stamps, and when a text names a character", () => {
    const schemas = (loadContract().document as unknown as { components: { schemas: Record<string, { properties: Record<string, { maxLength?: number }> }> } }).components.schemas;
    expect(COMMAND_MAX_LENGTH).to.equal(schemas.CommandRequest!.properties.command!.maxLength);
    expect(utcDate('2026-11-21 20:21:00').toISOString()).to.equal('2026-11-21T20:21:00.000Z');
    expect(Number.isNaN(utcDate('soon').getTime())).to.equal(true);
    expect(mentions('Wren, are you there?', 'Wren Ashdown')).to.equal(true);
    expect(mentions('ask wren ashdown', 'Wren Ashdown')).to.equal(true);
    expect(mentions('the wrens are singing', 'Wren Ashdown')).to.equal(false);
    expect(mentions("Wren's lantern", 'Wren Ashdown')).to.equal(true);
    expect(mentions("O'Brien here", "O'Brien")).to.equal(true);
    expect(mentions("O'Briens here", "O'Brien")).to.equal(false);
  });

  it('words arrivals and departures', () => {
    expect(movementLine('arrive', 'Mara', 'north', 'walk')).to.equal('Mara arrives from the south.');
    expect(movementLine('arrive', 'Mara', null, 'login')).to.equal('Mara steps into the world.');
    expect(movementLine('leave', 'Mara', 'up', 'walk')).to.equal('Mara leaves up.');
    expect(movementLine('leave', 'Mara', null, 'logout')).to.equal('Mara leaves the world.');
    expect(itemLine({ character: 'Mara', action: 'take', item: 'Lantern' })).to.equal('Mara picks up the Lantern.');
    expect(itemLine({ character: null, action: 'appear', item: 'Lantern' })).to.equal('The Lantern appears.');
    expect(itemLine({ character: null, action: 'vanish', item: 'Lantern' })).to.equal('The Lantern vanishes.');
  });

  it('completes verbs, directions and names, from the commands the server lists', async () => {
    const anna = await newPlayer(server, 'Anna', 'lockkeepers_square');
    const listed = await server.get(`/commands/${anna.sessionId}`);
    expect(listed.status).to.equal(200);
    const context = { commands: listed.body.commands, exits: ['north', 'east'], items: ['Canal Penny', 'Brass Gauge'], inventory: ['Ember Charm'], people: ['Mara Vell', 'Marek Stone', 'Wren Ashdown'] };
    expect(completions('no', context)).to.deep.equal(['north']);
    expect(completions('/wh', context)).to.deep.equal(['/whisper ', '/who']);
    expect(completions('take c', context)).to.deep.equal(['take Canal Penny']);
    expect(completions('get c', context)).to.deep.equal(['get Canal Penny']);
    expect(completions('drop e', context)).to.deep.equal(['drop Ember Charm']);
    expect(completions('whisper ma', context)).to.deep.equal(['whisper Mara Vell ', 'whisper Marek Stone ']);
    expect(completions('say hello wr', context)).to.deep.equal(['say hello Wren Ashdown']);
    expect(completions('say hello ', context)).to.deep.equal([]);
    expect(completions('look x', context)).to.deep.equal([]);
    expect(completions('tell wr', context)).to.deep.equal(['tell Wren Ashdown ']);
    expect(completions('go e', context)).to.deep.equal(['go east']);
    expect(completions('examine b', context)).to.deep.equal(['examine Brass Gauge']);
    expect(commonPrefix(['whisper Mara Vell ', 'whisper Marek Stone '])).to.equal('whisper Mar');
  });
});
