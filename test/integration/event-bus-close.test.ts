/**
 * The PostgreSQL event bus closed while it reconnects: the connection being opened must not be
 * kept (it would hold its LISTEN open and the process alive after shutdown). A TCP proxy in
 * front of PostgreSQL cuts the bus's connection, then holds the reconnect's connection until the
 * bus has been closed, then lets it through.
 */
import { describe, it, before, after } from 'mocha';
import { expect } from 'chai';
import net from 'node:net';
import knexFactory, { type Knex } from 'knex';
import { PostgresEventBus } from '../../src/db/event-bus.ts';
import { createLogger } from '../../src/logging/logger.ts';
import { usePostgres } from '../helpers/test-server.ts';
import { eventually } from '../helpers/eventually.ts';
import { ON_POSTGRESQL, skipBecause } from '../helpers/needs.ts';

/** A proxy to `target`; `hold` keeps new connections waiting until `release`. */
class HoldingProxy {
  readonly server: net.Server;
  readonly sockets = new Set<net.Socket>();
  readonly waiting: Array<() => void> = [];
  hold = false;

  constructor(target: { host: string; port: number }) {
    this.server = net.createServer((client) => {
      this.sockets.add(client);
      client.on('close', () => this.sockets.delete(client));
      client.pause();
      const connect = (): void => {
        const upstream = net.connect(target, () => client.resume());
        this.sockets.add(upstream);
        upstream.on('close', () => {
          this.sockets.delete(upstream);
          client.destroy();
        });
        client.on('close', () => upstream.destroy());
        client.on('error', () => upstream.destroy());
        upstream.on('error', () => client.destroy());
        client.pipe(upstream).pipe(client);
      };
      if (this.hold) this.waiting.push(connect);
      else connect();
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return (this.server.address() as net.AddressInfo).port;
  }

  cut(): void {
    for (const socket of this.sockets) socket.destroy();
  }

  release(): void {
    for (const connect of this.waiting.splice(0)) connect();
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('PostgreSQL event bus closed during a reconnect', function () {
  this.timeout(30_000);
  let admin: Knex;
  let proxy: HoldingProxy;

  before(function () {
    if (!usePostgres) skipBecause(this, ON_POSTGRESQL);
    admin = knexFactory({ client: 'pg', connection: process.env.MUD_TEST_DATABASE_URL, pool: { min: 0, max: 1 } });
  });
  after(async () => {
    await proxy?.close();
    await admin?.destroy();
  });

  it('lets go of the connection it was opening: no LISTEN is left', async () => {
    const url = new URL(process.env.MUD_TEST_DATABASE_URL!);
    proxy = new HoldingProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.port = String(await proxy.listen());
    const channel = `closing_${process.pid}_${Date.now()}`;
    const bus = new PostgresEventBus(admin, url.href, channel, createLogger('silent'));
    const listening = async (): Promise<number> =>
      Number((await admin.raw("select count(*) as n from pg_stat_activity where query = ?", [`LISTEN "mud_events_${channel}"`])).rows[0].n);
    await bus.start();
    expect(await listening()).to.equal(1);

    // Its connection cut, the bus reconnects; the reconnect's connection is held at the proxy.
    proxy.hold = true;
    proxy.cut();
    await eventually(async () => expect(proxy.waiting.length).to.equal(1), 5000);
    await bus.close();
    proxy.release();
    // The held connection goes through now: the bus must end it rather than LISTEN on it for good.
    await eventually(async () => expect(proxy.sockets.size, 'connections still open through the proxy').to.equal(0), 5000);
    expect(await listening()).to.equal(0);
    expect(bus.connected()).to.equal(false);
  });
});
