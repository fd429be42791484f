import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { afterEach, beforeEach, describe, it } from 'mocha';
import { ConfigError, SETTINGS, TRUST_PROXY_VALUES, loadConfig } from '../../src/config/config.ts';
import type { Config } from '../../src/config/config.ts';

const REPO = path.resolve(import.meta.dirname, '..', '..');
const EXAMPLE = path.join(REPO, 'config', 'server.example.ini');

/** Built-in defaults of the original settings; other sections are checked generically. */
const DEFAULTS = {
  server: {
    host: '127.0.0.1',
    port: 8000,
    maxBodyBytes: 1048576,
    shutdownTimeoutSeconds: 10,
    validateResponses: false,
  },
  database: { path: 'data/mud.db', url: '' },
  logging: { level: 'info' },
  security: { corsOrigins: ['http://localhost:8000', 'http://127.0.0.1:8000'] },
  worlds: { worldsRoot: 'worlds', defaultWorldId: 'emberwick' },
};

/** Asserts `config` holds (at least) the DEFAULTS above, section by section. */
function expectDefaults(config: Config): void {
  for (const [section, values] of Object.entries(DEFAULTS)) {
    expect((config as unknown as Record<string, unknown>)[section], section).to.deep.include(values);
  }
}

function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (err) {
    expect(err).to.be.instanceOf(ConfigError);
    return err as ConfigError;
  }
  expect.fail('expected a ConfigError');
}

describe('config', () => {
  let tmp: string;
  /** Writes an INI file into the temp dir and returns its path. */
  const writeIni = (text: string, name = 'server.ini'): string => {
    const file = path.join(tmp, name);
    fs.writeFileSync(file, text);
    return file;
  };
  /** loadConfig without touching process.env or the repo's config/server.ini. */
  const load = (env: Record<string, string> = {}, iniPath: string | null = null) => loadConfig({ env, iniPath });

  beforeEach(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mud-config-'));
  });

  afterEach(() => {
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  describe('defaults and precedence', () => {
    it('has the built-in defaults with no env and no file', () => {
      const { config, warnings, source } = load();
      expectDefaults(config);
      expect(config.server.host).to.equal('127.0.0.1');
      expect(config.server.port).to.equal(8000);
      expect(config.database.path).to.equal('data/mud.db');
      expect(config.worlds.worldsRoot).to.equal('worlds');
      expect(config.worlds.defaultWorldId).to.equal('emberwick');
      expect(config.security.corsOrigins).to.deep.equal(['http://localhost:8000', 'http://127.0.0.1:8000']);
      expect(warnings).to.deep.equal([]);
      expect(source).to.equal(null);
    });

    it('ini value overrides the default', () => {
      const file = writeIni('[server]\nport = 9001\nhost = 0.0.0.0\n[worlds]\ndefault_world_id = hollow_spire\n');
      const { config, warnings, source } = load({}, file);
      expect(config.server.port).to.equal(9001);
      expect(config.server.host).to.equal('0.0.0.0');
      expect(config.worlds.defaultWorldId).to.equal('hollow_spire');
      expect(config.database.path).to.equal('data/mud.db');
      expect(warnings).to.deep.equal([]);
      expect(source).to.equal(file);
    });

    it('environment beats ini', () => {
      const file = writeIni('[server]\nport = 9001\n[database]\npath = ini.db\n');
      const { config } = load({ MUD_PORT: '9002', MUD_DB_PATH: 'env.db' }, file);
      expect(config.server.port).to.equal(9002);
      expect(config.database.path).to.equal('env.db');
    });

    it('environment beats the default without a file', () => {
      const { config } = load({ MUD_HOST: '0.0.0.0', MUD_SERVER_SHUTDOWN_TIMEOUT_SECONDS: '30' });
      expect(config.server.host).to.equal('0.0.0.0');
      expect(config.server.shutdownTimeoutSeconds).to.equal(30);
    });

    it('an empty or blank env value is ignored (ini / default still apply)', () => {
      const file = writeIni('[server]\nport = 9001\n');
      const { config } = load({ MUD_PORT: '', MUD_HOST: '   ', MUD_LOG_LEVEL: '' }, file);
      expect(config.server.port).to.equal(9001);
      expect(config.server.host).to.equal('127.0.0.1');
      expect(config.logging.level).to.equal('info');
    });

    it('DATABASE_URL maps to database.url', () => {
      const url = 'postgres://mud:secret@localhost:5432/mud';
      expect(load({ DATABASE_URL: url }).config.database.url).to.equal(url);
      const file = writeIni(`[database]\nurl = ${url}\n`);
      expect(load({}, file).config.database.url).to.equal(url);
    });

    it('every setting is overridable through its env variable', () => {
      const env = Object.fromEntries(SETTINGS.map((st) => [st.env, st.kind.type === 'string' ? 'x' : st.default]));
      const { config, warnings } = load(env);
      expect(config.server.host).to.equal('x');
      expect(config.database.path).to.equal('x');
      expect(config.database.url).to.equal('x');
      expect(config.worlds.worldsRoot).to.equal('x');
      expect(config.worlds.defaultWorldId).to.equal('x');
      expect(warnings).to.deep.equal([]);
    });
  });

  describe('value parsing', () => {
    it('lists are trimmed and empties dropped', () => {
      const { config } = load({ MUD_CORS_ORIGINS: ' http://a.test ,, http://b.test ,  , ' });
      expect(config.security.corsOrigins).to.deep.equal(['http://a.test', 'http://b.test']);
      const file = writeIni('[security]\ncors_origins = http://c.test,  ,http://d.test\n');
      expect(load({}, file).config.security.corsOrigins).to.deep.equal(['http://c.test', 'http://d.test']);
    });

    it('a list of only separators is empty', () => {
      expect(load({ MUD_CORS_ORIGINS: ' , , ' }).config.security.corsOrigins).to.deep.equal([]);
    });

    for (const value of ['true', 'yes', '1', 'on', 'TRUE', 'Yes', 'ON', ' on ']) {
      it(`bool '${value}' is true`, () => {
        expect(load({ MUD_SERVER_VALIDATE_RESPONSES: value }).config.server.validateResponses).to.equal(true);
      });
    }

    for (const value of ['false', 'no', '0', 'off', 'FALSE', 'No', 'Off']) {
      it(`bool '${value}' is false`, () => {
        const file = writeIni('[server]\nvalidate_responses = true\n');
        expect(load({ MUD_SERVER_VALIDATE_RESPONSES: value }, file).config.server.validateResponses).to.equal(false);
      });
    }

    it('bools in the ini file (ini turns true/false into booleans)', () => {
      for (const [text, expected] of [['true', true], ['YES', true], ['on', true], ['false', false], ['0', false]] as const) {
        const file = writeIni(`[server]\nvalidate_responses = ${text}\n`);
        expect(load({}, file).config.server.validateResponses, text).to.equal(expected);
      }
    });

    it('a bad bool throws naming the key and the accepted values', () => {
      const err = configError(() => load({ MUD_SERVER_VALIDATE_RESPONSES: 'maybe' }));
      expect(err.message).to.include('[server] validate_responses');
      expect(err.message).to.include("'maybe'");
      expect(err.message).to.include('MUD_SERVER_VALIDATE_RESPONSES');
      for (const accepted of ['true', 'yes', '1', 'on', 'false', 'no', '0', 'off']) expect(err.message).to.include(accepted);
    });

    it('a bad bool in the ini file names the file', () => {
      const file = writeIni('[server]\nvalidate_responses = sometimes\n');
      const err = configError(() => load({}, file));
      expect(err.message).to.include('[server] validate_responses').and.to.include(file);
    });

    it('ints are parsed, with surrounding blanks allowed', () => {
      expect(load({ MUD_PORT: ' 0 ' }).config.server.port).to.equal(0);
      expect(load({ MUD_PORT: '65535' }).config.server.port).to.equal(65535);
      expect(load({ MUD_SERVER_MAX_BODY_BYTES: '2048' }).config.server.maxBodyBytes).to.equal(2048);
    });

    for (const value of ['abc', '70000', '-1', '80.5', '8e3']) {
      it(`MUD_PORT=${value} throws naming [server] port and the range`, () => {
        const err = configError(() => load({ MUD_PORT: value }));
        expect(err.message).to.include('[server] port');
        expect(err.message).to.include(`'${value}'`);
        expect(err.message).to.include('from 0 to 65535');
      });
    }

    it('a bad int in the ini file throws naming the range', () => {
      const file = writeIni('[server]\nshutdown_timeout_seconds = 0\n');
      const err = configError(() => load({}, file));
      expect(err.message).to.include('[server] shutdown_timeout_seconds').and.to.include('from 1 to 600');
    });

    it('an empty ini value of an int setting is refused', () => {
      const file = writeIni('[server]\nport =\n');
      expect(configError(() => load({}, file)).message).to.include('[server] port');
    });

    it('enums are case-insensitive and stored lower-case', () => {
      expect(load({ MUD_LOG_LEVEL: 'DEBUG' }).config.logging.level).to.equal('debug');
      expect(load({ MUD_LOG_LEVEL: 'silent' }).config.logging.level).to.equal('silent');
    });

    it('a bad enum throws naming the accepted values', () => {
      const err = configError(() => load({ MUD_LOG_LEVEL: 'loud' }));
      expect(err.message).to.include('[logging] level');
      expect(err.message).to.include("'loud'");
      expect(err.message).to.include('error, warn, info, debug, silent');
    });

    it('[server] trust_proxy takes false, a hop count or proxy addresses, subnets and range names', () => {
      const trust = (value: string) => load({ MUD_SERVER_TRUST_PROXY: value }).config.server.trustProxy;
      expect(load().config.server.trustProxy).to.equal(false);
      for (const off of ['false', 'OFF', 'no', '0']) expect(trust(off), off).to.equal(false);
      expect(trust('1')).to.equal(1);
      expect(trust('10')).to.equal(10);
      expect(trust('loopback')).to.deep.equal(['loopback']);
      expect(trust(' 10.0.0.1, 192.168.0.0/16 ,::1, fd00::/8, Uniquelocal ')).to.deep.equal(['10.0.0.1', '192.168.0.0/16', '::1', 'fd00::/8', 'uniquelocal']);
    });

    // `true` would trust every hop: any client could then choose its address by sending X-Forwarded-For.
    it('[server] trust_proxy refuses true, hop counts out of range and anything that is not an address', () => {
      for (const value of ['true', 'yes', '11', '-1', '10.0.0.256', '10.0.0.0/33', '::1/129', '10.0.0.0/8/8', 'proxy.example.com', '10.0.0.1, nonsense', ',']) {
        const err = configError(() => load({ MUD_SERVER_TRUST_PROXY: value }));
        expect(err.message, value).to.include('[server] trust_proxy');
        expect(err.message, value).to.include(TRUST_PROXY_VALUES);
      }
    });
  });

  describe('warnings', () => {
    it('an unknown key in a known section is a warning, not an error', () => {
      const file = writeIni('[server]\nport = 9001\ncolour = red\n');
      const { config, warnings } = load({}, file);
      expect(config.server.port).to.equal(9001);
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.include('[server] colour').and.to.include(file);
    });

    it('a key of an unknown section is a warning, not an error', () => {
      const file = writeIni('[graphics]\nfps = 60\n[server]\nport = 9001\n');
      const { config, warnings } = load({}, file);
      expect(config.server.port).to.equal(9001);
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.include('[graphics] fps');
    });

    it('a known key in the wrong section is a warning and is not applied', () => {
      const file = writeIni('[database]\nport = 9001\n');
      const { config, warnings } = load({}, file);
      expect(config.server.port).to.equal(8000);
      expect(warnings.join('\n')).to.include('[database] port');
    });

    it('a key outside any section is a warning', () => {
      const file = writeIni('port = 9001\n[server]\nhost = 0.0.0.0\n');
      const { config, warnings } = load({}, file);
      expect(config.server.port).to.equal(8000);
      expect(config.server.host).to.equal('0.0.0.0');
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.include("'port'");
    });

    it('an unknown MUD_* variable is a warning', () => {
      const { warnings } = load({ MUD_PROT: '9001' });
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.include('MUD_PROT');
    });

    it('MUD_CONFIG, MUD_ADMIN_USER, MUD_ADMIN_PASSWORD, MUD_TEST_DATABASE_URL and non-MUD variables are not warned about', () => {
      const { warnings } = load({
        MUD_CONFIG: path.join(tmp, 'ignored-because-iniPath-is-given.ini'),
        MUD_ADMIN_USER: 'admin',
        MUD_ADMIN_PASSWORD: 'a long admin password',
        MUD_TEST_DATABASE_URL: 'postgres://localhost/test',
        PATH: '/usr/bin',
        HOME: '/root',
      });
      expect(warnings).to.deep.equal([]);
    });

    it('every documented env variable is known', () => {
      const env = Object.fromEntries(SETTINGS.map((st) => [st.env, '']));
      expect(load(env).warnings).to.deep.equal([]);
    });
  });

  describe('choosing the ini file', () => {
    it('MUD_CONFIG pointing at a missing file throws', () => {
      const missing = path.join(tmp, 'missing.ini');
      const err = configError(() => loadConfig({ env: { MUD_CONFIG: missing } }));
      expect(err.message).to.include('MUD_CONFIG').and.to.include(missing);
    });

    it('MUD_CONFIG pointing at a file is used', () => {
      const file = writeIni('[server]\nport = 9100\n', 'custom.ini');
      const { config, source } = loadConfig({ env: { MUD_CONFIG: file } });
      expect(config.server.port).to.equal(9100);
      expect(source).to.equal(file);
    });

    it('an explicit iniPath wins over MUD_CONFIG', () => {
      const file = writeIni('[server]\nport = 9200\n', 'explicit.ini');
      const { config, source } = loadConfig({ env: { MUD_CONFIG: path.join(tmp, 'missing.ini') }, iniPath: file });
      expect(config.server.port).to.equal(9200);
      expect(source).to.equal(file);
    });

    it('iniPath null reads no file', () => {
      writeIni('[server]\nport = 9300\n');
      expect(loadConfig({ env: {}, iniPath: null }).source).to.equal(null);
    });

    it('falls back to config/server.ini in the working directory when it exists', () => {
      const cwd = process.cwd();
      try {
        process.chdir(tmp);
        expect(loadConfig({ env: {} }).source).to.equal(null);
        fs.mkdirSync('config');
        fs.writeFileSync(path.join('config', 'server.ini'), '[server]\nport = 9400\n');
        const { config, source } = loadConfig({ env: {} });
        expect(config.server.port).to.equal(9400);
        expect(source).to.equal(path.join('config', 'server.ini'));
      } finally {
        process.chdir(cwd);
      }
    });
  });

  describe('config/server.example.ini stays in sync with SETTINGS', () => {
    const text = fs.readFileSync(EXAMPLE, 'utf8');
    const lines = text.split(/\r?\n/);
    const KEY_LINE = /^;([a-z0-9_]+)\s*=(.*)$/;

    interface Documented {
      section: string;
      key: string;
      value: string;
      /** The contiguous `; ` comment lines directly above the key line. */
      comments: string[];
    }
    const documented: Documented[] = [];
    const sectionOrder: string[] = [];
    let section = '';
    lines.forEach((line, i) => {
      const header = /^\[([^\]]+)\]\s*$/.exec(line);
      if (header?.[1] !== undefined) {
        section = header[1];
        sectionOrder.push(section);
        return;
      }
      const m = KEY_LINE.exec(line);
      if (!m || m[1] === undefined || m[2] === undefined) return;
      const comments: string[] = [];
      for (let j = i - 1; j >= 0 && (lines[j] ?? '').startsWith('; '); j--) comments.unshift(lines[j] ?? '');
      documented.push({ section, key: m[1], value: m[2].trim(), comments });
    });

    const accepts = (st: (typeof SETTINGS)[number]): string | null => {
      switch (st.kind.type) {
        case 'int':
          return `; Accepts: an integer from ${st.kind.min} to ${st.kind.max}.`;
        case 'number':
          return `; Accepts: a number from ${st.kind.min} to ${st.kind.max}.`;
        case 'bool':
          return '; Accepts: true, yes, 1, on, false, no, 0, off.';
        case 'enum':
          return `; Accepts: ${st.kind.values.join(', ')}.`;
        case 'list':
          return '; Accepts: a comma-separated list.';
        case 'trust_proxy':
          return `; Accepts: ${TRUST_PROXY_VALUES}.`;
        case 'url':
          return `; Accepts: empty, or a ${st.kind.protocols.map((p) => `${p}//…`).join(' or ')} URL.`;
        case 'string':
          return null;
      }
    };

    it('every SETTINGS entry appears as a commented `;key = default` line in its [section], with doc and env', () => {
      for (const st of SETTINGS) {
        const found = documented.filter((d) => d.section === st.section && d.key === st.key);
        expect(found, `[${st.section}] ${st.key}`).to.have.length(1);
        const entry = found[0] as Documented;
        expect(entry.value, `[${st.section}] ${st.key} default`).to.equal(st.default);
        expect(entry.comments, `[${st.section}] ${st.key} doc`).to.include(`; ${st.doc} (env ${st.env})`);
        const kindLine = accepts(st);
        if (kindLine) expect(entry.comments, `[${st.section}] ${st.key} accepted values`).to.include(kindLine);
      }
    });

    it('documents no other keys, grouped by section in SETTINGS order', () => {
      // Sections in order of first appearance in SETTINGS; keys of a section in SETTINGS order.
      const sections = [...new Set(SETTINGS.map((st) => st.section))];
      const expected = sections.flatMap((sec) => SETTINGS.filter((st) => st.section === sec).map((st) => `${sec}.${st.key}`));
      expect(documented.map((d) => `${d.section}.${d.key}`)).to.deep.equal(expected);
      expect(sectionOrder).to.deep.equal(sections);
    });

    it('names every env variable', () => {
      for (const st of SETTINGS) expect(text, st.env).to.include(`(env ${st.env})`);
    });

    it('has a header explaining use, precedence, unknown keys and bad values', () => {
      const header = text.slice(0, text.indexOf('['));
      expect(header).to.include('config/server.ini');
      expect(header).to.include('MUD_CONFIG');
      expect(header).to.match(/environment variable > this INI file > built-in default/);
      expect(header).to.match(/unknown/i);
      expect(header).to.match(/stops\s+;?\s*start-up/);
    });

    it('the [world_policy.<id>] example in the comments is valid', () => {
      const snippet = lines.filter((l) => /^;   (\[world_policy\.|[a-z_]+ = )/.test(l)).map((l) => l.slice(4));
      expect(snippet[0]).to.match(/^\[world_policy\.[a-z0-9_-]+\]$/);
      const { config, warnings } = load({}, writeIni(`${snippet.join('\n')}\n`, 'policy.ini'));
      expect(warnings).to.deep.equal([]);
      expect(config.worldPolicies).to.deep.equal({ hollow_spire: { accessMode: 'open', slotLimitPerAccount: 2 } });
    });

    it('loading the example as shipped changes nothing', () => {
      const { config, warnings } = load({}, EXAMPLE);
      expect(config).to.deep.equal(load().config);
      expectDefaults(config);
      expect(warnings).to.deep.equal([]);
    });

    it('loading the example with every key line uncommented gives exactly the defaults', () => {
      const uncommented = text.replace(/^;([a-z0-9_]+\s*=)/gm, '$1');
      const count = (uncommented.match(/^[a-z0-9_]+\s*=/gm) ?? []).length;
      expect(count).to.equal(SETTINGS.length);
      const file = writeIni(uncommented, 'uncommented.ini');
      const { config, warnings } = load({}, file);
      expect(config).to.deep.equal(load().config);
      expectDefaults(config);
      expect(warnings).to.deep.equal([]);
    });
  });
});
