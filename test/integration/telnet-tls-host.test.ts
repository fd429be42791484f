/**
 * `[telnet] tls_host`: the telnet-over-TLS listener binds to its own address, so that TLS can be
 * offered to other hosts while the plain listener stays on `host` (README, "Playing with a MUD
 * client"). Here host is 127.0.0.1 and tls_host 127.0.0.2, both this machine's loopback.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { startTestServer, usePostgres, type TestServer } from '../helpers/test-server.ts';
import { TelnetClient } from '../helpers/telnet-client.ts';
import { freePort } from '../helpers/free-port.ts';

const DB_NAME = usePostgres ? 'PostgreSQL' : 'SQLite';

/** The error a connection attempt ended in, or null when it connected. */
async function connectError(port: number, tls: boolean, host: string): Promise<string | null> {
  try {
    (await TelnetClient.connect(port, { tls }, host)).close();
    return null;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? (err as Error).message;
  }
}

describe(`telnet door: tls_host (${DB_NAME})`, function () {
  let server: TestServer;
  let certDir: string;
  let tlsPort: number;

  before(async () => {
    certDir = mkdtempSync(path.join(tmpdir(), 'mud-telnet-tls-host-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=localhost', '-keyout', path.join(certDir, 'key.pem'), '-out', path.join(certDir, 'cert.pem')], { stdio: 'ignore' });
    // Free on 127.0.0.1, so that a listener found there on this port would be the server's.
    tlsPort = await freePort();
    server = await startTestServer({
      env: {
        MUD_TELNET_ENABLED: 'true',
        MUD_TELNET_HOST: '127.0.0.1',
        MUD_TELNET_PORT: '0',
        MUD_TELNET_TLS_HOST: '127.0.0.2',
        MUD_TELNET_TLS_PORT: String(tlsPort),
        MUD_TELNET_TLS_CERT: path.join(certDir, 'cert.pem'),
        MUD_TELNET_TLS_KEY: path.join(certDir, 'key.pem'),
      },
    });
  });
  after(async () => {
    await server?.close();
    if (certDir) rmSync(certDir, { recursive: true, force: true });
  });

  it('serves TLS on tls_host, not on host; plain telnet on host, not on tls_host', async () => {
    expect(server.telnet!.tlsPort).to.equal(tlsPort);
    const secure = await TelnetClient.connect(tlsPort, { tls: true }, '127.0.0.2');
    try {
      await secure.read('Username: ');
    } finally {
      secure.close();
    }
    expect(await connectError(tlsPort, true, '127.0.0.1'), 'TLS on host').to.equal('ECONNREFUSED');
    const plain = await TelnetClient.connect(server.telnet!.port, {}, '127.0.0.1');
    try {
      await plain.read('Username: ');
    } finally {
      plain.close();
    }
    expect(await connectError(server.telnet!.port, false, '127.0.0.2'), 'plain telnet on tls_host').to.equal('ECONNREFUSED');
  });
});
