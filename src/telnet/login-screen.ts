/**
 * The connection screen, before login: `connect <username> <password>`, a username alone (the
 * password is asked for, unechoed), `create <username> <password>` for a new temporary
 * account, and `guest`, which plays at once. Each goes through the services and limits the HTTP
 * routes use (POST /login, /register, /register-guest).
 */
import { usernameKey } from '../shared/names.ts';
import type { TelnetConnection } from './connection.ts';
import { colour, firstWord, quit, type Screen } from './screen.ts';
import { showCharacters } from './characters-screen.ts';
import { enter } from './play-screen.ts';

const HELP = [
  '  connect <username> <password>   log in',
  '  <username>                      log in; the password is asked for, unechoed',
  '  create <username> <password>    a new account (temporary, for 24 hours)',
  '  guest                           play at once as a guest',
  '  colour off                      no ANSI colours',
  '  quit                            leave',
].join('\n');

export const showWelcome = (c: TelnetConnection): void => c.terminal.print(HELP);

async function connect(c: TelnetConnection, rest: string): Promise<void> {
  const { word, rest: given } = firstWord(rest);
  const username = word || (await c.terminal.ask('Username: '));
  const password = given || (await c.terminal.ask('Password: ', true));
  await c.logIn(username, password);
  await showCharacters(c);
}

/**
 * A lone word is a username: the password is asked for, and not echoed. A word that is no
 * account's (`look`, `who`) is answered at once and costs no login attempt (docs/decisions.md,
 * "Failed logins count, per address and per name"); it is counted among the address's lookups,
 * so names cannot be tried here faster than logins could.
 */
async function username(c: TelnetConnection, word: string): Promise<void> {
  await c.limit(c.s.limits.usernameLookupByAddress, c.address);
  if ((await c.s.accounts.usernameFor(word)) !== null) return connect(c, word);
  c.terminal.print(`There is no account called '${word}'. Type connect <username> <password>, create <username> <password> for a new account, guest, or help.`);
}

async function create(c: TelnetConnection, rest: string): Promise<void> {
  const { word, rest: given } = firstWord(rest);
  const username = word || (await c.terminal.ask('New username: '));
  const password = given || (await c.terminal.ask('Password (12 or more characters): ', true));
  const confirm = given || (await c.terminal.ask('The password again: ', true));
  await c.limit(c.s.limits.registerByAddress, c.address);
  await c.limit(c.s.limits.registerByUsername, usernameKey(username));
  c.terminal.print((await c.s.accounts.register(username, password, confirm)).message);
  await c.logIn(username, password);
  await showCharacters(c);
}

async function guest(c: TelnetConnection): Promise<void> {
  const name = (await c.terminal.ask("Your character's name: ")).normalize('NFC');
  const password = await c.terminal.ask('A password, to come back as this guest (12 or more characters): ', true);
  const confirm = await c.terminal.ask('The password again: ', true);
  await c.limit(c.s.limits.registerByAddress, c.address);
  const made = await c.s.entry.registerGuest(password, confirm, name);
  c.terminal.print(made.message);
  await c.logIn(made.username, password);
  await enter(c, made.character_id, made.world_id);
}

export const login: Screen = {
  prompt: () => 'Username: ',
  commands: {
    connect,
    create,
    guest: (c) => guest(c),
    help: async (c) => showWelcome(c),
    colour,
    color: colour,
    quit,
  },
  other: async (c, text, verb, args) => (args === '' ? username(c, text) : c.terminal.print(`Unknown command '${verb}'. Type help for the commands.`)),
};
