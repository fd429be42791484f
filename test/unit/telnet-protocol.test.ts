/**
 * The telnet door's protocol layer on its own (src/telnet/): the byte parser against split,
 * escaped, oversized and random input; the line reader's line endings and bound; option
 * negotiation without loops; GMCP helpers; wrapping.
 */
import { describe, it } from 'mocha';
import { expect } from 'chai';
import { DO, DONT, ECHO, GMCP, IAC, LineReader, MAX_SUBNEGOTIATION_BYTES, NAWS, SB, SE, subnegotiation, TelnetParser, TTYPE, WILL, WONT, type Verb } from '../../src/telnet/protocol.ts';
import { Negotiation } from '../../src/telnet/negotiation.ts';
import { decode, encode, roomInfo, roomNumber, Supports } from '../../src/telnet/gmcp.ts';
import { Terminal, wrap } from '../../src/telnet/render.ts';
import { WorldCatalog } from '../../src/services/worlds/world-catalog.ts';

const NOP = 241;
const GA = 249;

/** Everything a parser reports, as comparable strings (text runs joined). */
function parse(chunks: Buffer[]): string[] {
  const out: string[] = [];
  let text: number[] = [];
  const flush = () => {
    if (text.length > 0) out.push(`text ${Buffer.from(text).toString('latin1')}`);
    text = [];
  };
  const parser = new TelnetParser({
    data: (bytes) => text.push(...bytes),
    negotiate: (verb, option) => {
      flush();
      out.push(`neg ${verb} ${option}`);
    },
    subnegotiation: (option, data) => {
      flush();
      out.push(`sub ${option} ${data.toString('latin1')}`);
    },
  });
  for (const chunk of chunks) parser.feed(chunk);
  flush();
  return out;
}

function bytewise(buffer: Buffer): Buffer[] {
  return [...buffer].map((b) => Buffer.of(b));
}

/** A small deterministic generator, so a failing run can be repeated. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state >>> 16;
  };
}

describe('telnet protocol (src/telnet)', () => {
  describe('TelnetParser', () => {
    const stream = Buffer.concat([
      Buffer.from('lo'),
      Buffer.of(IAC, WILL, NAWS),
      Buffer.from('ok'),
      Buffer.of(IAC, IAC),
      Buffer.from('x'),
      Buffer.of(IAC, NOP, IAC, GA),
      Buffer.of(IAC, SB, NAWS, 0, 80, IAC, IAC, 24, IAC, SE),
      Buffer.of(IAC, SB, GMCP, ...Buffer.from('Core.Hello {"client":"Mudlet"}'), IAC, SE),
      Buffer.from('\r\n'),
    ]);
    const expected = ['text lo', `neg ${WILL} ${NAWS}`, 'text ok\xffx', `sub ${NAWS} \x00P\xff\x18`, `sub ${GMCP} Core.Hello {"client":"Mudlet"}`, 'text \r\n'];

    it('takes commands, negotiation and subnegotiations out of the text; IAC IAC is one 0xFF', () => {
      expect(parse([stream])).to.deep.equal(expected);
    });

    it('reads the same when every byte arrives in a packet of its own', () => {
      expect(parse(bytewise(stream))).to.deep.equal(expected);
    });

    it('drops a subnegotiation longer than the limit whole, and reads on after it', () => {
      const long = Buffer.concat([Buffer.of(IAC, SB, GMCP), Buffer.alloc(MAX_SUBNEGOTIATION_BYTES + 10, 0x41), Buffer.of(IAC, SE), Buffer.from('after')]);
      expect(parse([long])).to.deep.equal(['text after']);
    });

    it('an IAC command inside a subnegotiation breaks it off and is read as a command', () => {
      expect(parse([Buffer.of(IAC, SB, TTYPE, 0, 0x41, IAC, DO, ECHO), Buffer.from('text')])).to.deep.equal([`neg ${DO} ${ECHO}`, 'text text']);
    });

    it('the encoder doubles IAC inside a subnegotiation', () => {
      expect([...subnegotiation(NAWS, Buffer.of(0, IAC, 0, 24))]).to.deep.equal([IAC, SB, NAWS, 0, IAC, IAC, 0, 24, IAC, SE]);
      expect(parse([subnegotiation(NAWS, Buffer.of(0, IAC, 0, 24))])).to.deep.equal([`sub ${NAWS} \x00\xff\x00\x18`]);
    });

    it('random bytes never throw and never produce more text than was sent', () => {
      const next = random(25);
      for (let round = 0; round < 200; round++) {
        // Rich in protocol bytes, so every state is visited.
        const bytes = Buffer.from(Array.from({ length: 1 + (next() % 2000) }, () => (next() % 3 === 0 ? 240 + (next() % 16) : next() % 256)));
        let text = 0;
        const parser = new TelnetParser({ data: (b) => (text += b.length), negotiate: () => undefined, subnegotiation: () => undefined });
        for (let i = 0, size = 0; i < bytes.length; i += size) {
          size = 1 + (next() % 64);
          parser.feed(bytes.subarray(i, i + size));
        }
        expect(text).to.be.at.most(bytes.length);
      }
    });
  });

  describe('LineReader', () => {
    const lines = (reader: LineReader, ...chunks: string[]) =>
      chunks.flatMap((chunk) => reader.feed(Buffer.from(chunk, 'latin1'))).map((line) => (line.tooLong ? '<too long>' : line.bytes.toString('latin1')));

    it('ends lines at CR LF, CR NUL, LF and a lone CR, also when CR and LF arrive apart', () => {
      const reader = new LineReader(100);
      expect(lines(reader, 'one\r\ntwo\r\x00three\nfour\rfive\r', '\nsix\r', 'seven\n')).to.deep.equal(['one', 'two', 'three', 'four', 'five', 'six', 'seven']);
    });

    it('keeps an unfinished line for the next chunk', () => {
      const reader = new LineReader(100);
      expect(lines(reader, 'hal', 'f a ', 'line\r\n')).to.deep.equal(['half a line']);
    });

    it('reports a line over the limit once, drops its bytes, and reads the next line whole', () => {
      const reader = new LineReader(8);
      expect(lines(reader, '12345', '67890', 'abc\r\nshort\r\n', '12345678\n')).to.deep.equal(['<too long>', 'short', '12345678']);
    });
  });

  describe('Negotiation', () => {
    const negotiate = () => {
      const sent: string[] = [];
      const changes: string[] = [];
      const names: Record<number, string> = { [WILL]: 'WILL', [WONT]: 'WONT', [DO]: 'DO', [DONT]: 'DONT' };
      const n = new Negotiation((bytes) => sent.push(`${names[bytes[1]!]} ${bytes[2]}`), { changed: (side, option, on) => changes.push(`${side} ${option} ${on}`) });
      return { n, sent, changes, receive: (verb: Verb, option: number) => n.receive(verb, option) };
    };

    it('refuses options it does not speak, on either side', () => {
      const { sent, receive } = negotiate();
      receive(DO, 99);
      receive(WILL, 98);
      receive(DO, 3);
      expect(sent).to.deep.equal(['WONT 99', 'DONT 98', 'WONT 3']);
    });

    it('agrees to what it speaks once, and does not answer an answer (no loops)', () => {
      const { n, sent, changes, receive } = negotiate();
      n.ask(NAWS);
      receive(WILL, NAWS);
      receive(WILL, NAWS);
      n.offer(GMCP);
      receive(DO, GMCP);
      receive(DO, GMCP);
      receive(WILL, TTYPE);
      expect(sent).to.deep.equal(['DO 31', 'WILL 201', 'DO 24']);
      expect(changes).to.deep.equal([`remote ${NAWS} true`, `local ${GMCP} true`, `remote ${TTYPE} true`]);
      expect(n.localOn(GMCP)).to.equal(true);
      receive(DONT, GMCP);
      expect(sent.at(-1)).to.equal('WONT 201');
      expect(n.localOn(GMCP)).to.equal(false);
    });

    it('echoes only when it offered to (a password prompt), never because a client asked', () => {
      const { n, sent, receive } = negotiate();
      receive(DO, ECHO);
      expect(sent).to.deep.equal(['WONT 1']);
      n.offer(ECHO);
      receive(DO, ECHO);
      expect(n.localOn(ECHO)).to.equal(true);
      n.withdraw(ECHO);
      receive(DONT, ECHO);
      expect(sent).to.deep.equal(['WONT 1', 'WILL 1', 'WONT 1']);
      expect(n.localOn(ECHO)).to.equal(false);
    });
  });

  describe('GMCP', () => {
    it('encodes and decodes `Package.Message <json>`; bad JSON leaves the data undefined', () => {
      expect(decode(encode('Room.Info', { num: 1 }))).to.deep.equal({ name: 'Room.Info', data: { num: 1 } });
      expect(decode(Buffer.from('Core.Ping'))).to.deep.equal({ name: 'Core.Ping', data: undefined });
      expect(decode(Buffer.from('Core.Hello {oops'))).to.deep.equal({ name: 'Core.Hello', data: undefined });
    });

    it('sends what a client supports once it says, everything before', () => {
      const supports = new Supports();
      expect(supports.wants('Room.Info')).to.equal(true);
      supports.apply('Core.Supports.Set', ['Char 1', 'Comm.Channel 1']);
      expect(['Char.Name', 'Comm.Channel.Text', 'Room.Info'].map((m) => supports.wants(m))).to.deep.equal([true, true, false]);
      supports.apply('Core.Supports.Add', ['Room 1']);
      supports.apply('Core.Supports.Remove', ['Char 1']);
      expect(['Char.Name', 'Room.Info'].map((m) => supports.wants(m))).to.deep.equal([false, true]);
    });

    it('Room.Info: stable positive room numbers, the zone as area, exits by short direction', async () => {
      const world = (await WorldCatalog.load('worlds')).get('emberwick')!;
      const info = roomInfo(world, world.defaultSpawn.room)!;
      expect(info.num).to.equal(roomNumber('emberwick', world.defaultSpawn.room));
      expect(info.num).to.be.within(1, 2 ** 31 - 1);
      expect(info.name).to.equal(world.rooms.get(world.defaultSpawn.room)!.name);
      expect(info.area).to.equal(world.zones.get(world.defaultSpawn.zone)!.name);
      const room = world.rooms.get(world.defaultSpawn.room)!;
      expect(Object.keys(info.exits).sort()).to.deep.equal(Object.keys(room.exits).map((d) => d[0]).sort());
      expect(info.exits.n).to.equal(roomNumber('emberwick', room.exits.north!));
      const numbers = new Set([...world.rooms.keys()].map((id) => roomNumber('emberwick', id)));
      expect(numbers.size, 'no two rooms share a number').to.equal(world.rooms.size);
    });
  });

  describe('rendering', () => {
    it('wraps at spaces within the width, cuts longer words, keeps the indentation', () => {
      expect(wrap('short', 10)).to.deep.equal(['short']);
      expect(wrap('the quick brown fox jumps', 10)).to.deep.equal(['the quick', 'brown fox', 'jumps']);
      expect(wrap('abcdefghijklmnop', 10)).to.deep.equal(['abcdefghij', 'klmnop']);
      expect(wrap('  - a long listed item here', 12)).to.deep.equal(['  - a long', '  listed', '  item here']);
    });

    it('colours room names and chat styles; plain without colour; ASCII when UTF-8 was declined; CR LF', () => {
      const terminal = new Terminal();
      expect(terminal.text('\n=== Hall ===\nA hall.')).to.equal('\r\n\x1b[1;33m=== Hall ===\x1b[0m\r\nA hall.\r\n');
      expect(terminal.styled('Ann yells: hi', 'yell')).to.equal('\x1b[1;31mAnn yells: hi\x1b[0m\r\n');
      terminal.colour = false;
      terminal.ascii = true;
      expect(terminal.text('You say: caf\u00e9 &lt;3 \x1b[2J')).to.equal('You say: caf? <3\r\n');
    });
  });
});
