/**
 * The reference import's mapping rules on their own: times, rooms (bare ids and a yell's
 * `zone:room`), chat channels, and the usernames and character names it keeps, cleans or
 * refuses (docs/decisions.md, "Moving from the reference server").
 */
import path from 'node:path';
import { expect } from 'chai';
import { before, describe, it } from 'mocha';
import { loadWorld, type World } from '../../src/services/worlds/world-loader.ts';
import { chatChannel, importedCharacterName, importedUsername, referenceTime, resolveRoom } from '../../src/services/migration/reference-import.ts';

const WORLDS = path.resolve(import.meta.dirname, '..', 'fixtures', 'reference-sample', 'worlds');

describe('reference import rules', () => {
  let world: World;
  before(async () => {
    world = await loadWorld(path.join(WORLDS, 'daily_undertaking'));
  });

  it('reads the reference times as UTC text', () => {
    expect(referenceTime('2026-11-25 09:33:35')).to.equal('2026-11-25 09:33:35');
    expect(referenceTime('2026-11-25T09:33:52.401380+00:00')).to.equal('2026-11-25 09:33:52');
    expect(referenceTime('2026-11-25T11:33:52+02:00')).to.equal('2026-11-25 09:33:52');
    expect(referenceTime('yesterday')).to.equal(null);
    expect(referenceTime(null)).to.equal(null);
  });

  it("resolves a bare room id as it is and a yell's zone:room to the zone's own room", () => {
    expect(resolveRoom(world, 'spawn')).to.equal('spawn');
    expect(resolveRoom(world, 'the_north_gardens:spawn')).to.equal('spawn');
    expect(resolveRoom(world, 'cobbled_street:street_middle')).to.equal('street_middle');
    // A repeated id keeps its bare form in one zone only; elsewhere it is <zone>_<id>.
    expect(resolveRoom(world, 'crooked_pipe:spawn')).to.equal('crooked_pipe_spawn');
    expect(resolveRoom(world, 'crooked_pipe:street_middle')).to.equal(undefined);
    expect(resolveRoom(world, 'nowhere')).to.equal(undefined);
  });

  it('infers the channel as the reference wrote it', () => {
    expect(chatChannel('[YELL] Hello', null)).to.equal('yell');
    expect(chatChannel('[WHISPER: A → B] hi', 3)).to.equal('whisper');
    expect(chatChannel('Hello [YELL] there', null)).to.equal('say');
  });

  it('keeps a username login can take, saying which rules for new accounts it breaks', () => {
    expect(importedUsername('rowan', true)).to.deep.equal({ username: 'rowan', notes: [] });
    expect(importedUsername('José', false)).to.deep.include({ username: 'José' });
    expect((importedUsername('José', false) as { notes: string[] }).notes[0]).to.match(/^kept as it is, though this server refuses it for a new account/);
    expect(importedUsername('mod_mary', false)).to.deep.equal({ username: 'mod_mary', notes: [] });
    expect(importedUsername('mod_mary', true)).to.deep.equal({ username: 'mod_mary', notes: ["kept as it is, though a self-registered name may not carry the reserved word 'mod' here"] });
    expect(importedUsername(' hazel ', false)).to.deep.equal({ username: 'hazel', notes: ["username stored as 'hazel' (trimmed, Unicode NFC as logins arrive)"] });
    expect(importedUsername('ha\u200bzel', false)).to.equal('the username holds invisible or control characters: nobody could type it');
    expect(importedUsername('x', false)).to.equal('this server refuses the username: Username must be 2-20 characters');
  });

  it("cleans a character name to this server's rules, or says why it cannot", () => {
    expect(importedCharacterName('Hazel Marchbank', true)).to.deep.equal({ name: 'Hazel Marchbank', notes: [] });
    expect(importedCharacterName('Pip <3', true)).to.deep.equal({ name: 'Pip', notes: ["renamed 'Pip': Character name must be 2-40 characters: letters, spaces, apostrophes and hyphens"] });
    expect(importedCharacterName('A'.repeat(50), true)).to.deep.include({ name: 'A'.repeat(40) });
    expect(importedCharacterName('Admin Bob', true)).to.deep.equal({ name: 'Admin Bob', notes: ["kept the reserved word 'admin', which a player may not choose for a new name here"] });
    expect(importedCharacterName('Admin Bob', false)).to.deep.equal({ name: 'Admin Bob', notes: [] });
    expect(importedCharacterName('1234', true)).to.equal('this server refuses the name: Character name must be 2-40 characters: letters, spaces, apostrophes and hyphens');
    expect(importedCharacterName('Qu\u0456ll', true)).to.equal('this server refuses the name: Character name must be written in one script: it mixes letters of different alphabets');
  });
});
