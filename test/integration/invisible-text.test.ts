/**
 * Invisible chat and look-alike names (issue 21, defect 6): chat loses Unicode's
 * default-ignorable code points and a message left blank is refused; a character name may not
 * mix scripts nor look like (UTS #39 skeleton) a name already in the world.
 */
import { describe, it } from 'mocha';
import { expect } from 'chai';
import { usePostgres } from '../helpers/test-server.ts';
import { oneServer } from '../helpers/suite-servers.ts';
import { GOOD_PASSWORD } from '../helpers/accounts.ts';
import { cmd, newPlayer } from '../helpers/players.ts';

describe(`invisible chat and look-alike names (${usePostgres ? 'PostgreSQL' : 'SQLite'})`, function () {
  const server = oneServer({ reset: true });
  const guest = (characterName: string) => server().post('/register-guest', { password: GOOD_PASSWORD, password_confirm: GOOD_PASSWORD, character_name: characterName });

  it('a say of nothing but invisible characters is refused and stores nothing; visible text loses them, emoji keep their joiners', async () => {
    const a = await newPlayer(server(), 'Anna');
    for (const invisible of ['\u200b', '\u2060\u2061\u2062\u2063\u2064', '\u3164', '\u{E0041}\u{E0042}\u{E007F}', '\u200b \ufeff \u00ad']) {
      expect(await cmd(a, `say ${invisible}`), JSON.stringify(invisible)).to.deep.equal({ success: false, message: 'Say what?' });
      expect((await cmd(a, `whisper ${a.name} ${invisible}`)).success).to.equal(false);
    }
    expect(await server().db('chat_messages').count({ n: '*' }).first()).to.satisfy((r: { n: unknown }) => Number(r.n) === 0);
    expect((await cmd(a, 'say he\u200bllo\u2063 there')).message).to.equal('You say: hello there');
    expect((await cmd(a, 'say \u{1F469}\u200d\u{1F4BB} \u2764\ufe0f')).message).to.equal('You say: \u{1F469}\u200d\u{1F4BB} \u2764\ufe0f');
  });

  it('a character name may not mix scripts, be invisible, or look like a name in the world', async () => {
    for (const name of ['Copa', 'Iris Vale']) expect((await guest(name)).status).to.equal(200);
    const mixed = await guest('Thougr\u0430bert');
    expect(mixed.status, mixed.text).to.equal(400);
    expect(mixed.body.detail).to.equal('Character name must be written in one script: it mixes letters of different alphabets');
    // All Cyrillic (one script), but it reads as the Latin 'Copa'; a lower-case L reads as a capital I.
    for (const [name, existing] of [['\u0421\u043e\u0440\u0430', 'Copa'], ['lris Vale', 'Iris Vale']]) {
      const lookalike = await guest(name!);
      expect(lookalike.status, lookalike.text).to.equal(400);
      expect(lookalike.body.detail).to.equal(`Character name looks too much like '${existing}', a character of this world`);
    }
    expect((await guest('\u3164\u3164')).body.detail).to.equal('Character name is required');
    const hidden = await guest('Mira\u200b Qel');
    expect(hidden.status, hidden.text).to.equal(200);
    expect(hidden.body.character_name).to.equal('Mira Qel');
  });
});
