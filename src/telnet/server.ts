/**
 * The telnet front door: a plain listener and, with a certificate, a TLS one, both handing
 * each accepted socket to a TelnetConnection. Connections are capped per client address and
 * in total from their TCP accept (slots.ts): a refused one is told so (over TLS, without a
 * word) and closed at once, and a TLS one must finish its handshake within
 * handshake_timeout_seconds. A session that ends anywhere (kick, ban, expiry, … announced on
 * the event bus by any instance) ends its connection, whichever screen it is on.
 */
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { createSecureContext, TLSSocket, type SecureContext } from 'node:tls';
import type { Config } from '../config/config.ts';
import { ConfigError } from '../config/config.ts';
import type { EventBus } from '../db/event-bus.ts';
import type { Logger } from '../logging/logger.ts';
import { addressKey } from '../services/limits/limits.ts';
import { TelnetConnection, type TelnetServices } from './connection.ts';
import { localSlots, workerSlots, type ConnectionSlots, type Refusal } from './slots.ts';

export interface TelnetServerOptions {
  services: TelnetServices;
  bus: EventBus;
  config: Config['telnet'];
  /** The TLS listener's certificate and key (tlsCredentials), or null for none. */
  tls: TlsCredentials | null;
  logger: Logger;
  version: string;
}

export interface TlsCredentials {
  cert: Buffer;
  key: Buffer;
}

/** Where the listeners ended up (port 0 picks a free one). */
export interface TelnetAddresses {
  port: number;
  /** Null when no TLS listener runs (no certificate configured). */
  tlsPort: number | null;
}

function readPem(file: string, key: string): Buffer {
  try {
    return readFileSync(file);
  } catch (err) {
    throw new ConfigError(`Cannot read [telnet] ${key} ${file}: ${(err as Error).message}`);
  }
}

/**
 * The TLS listener's certificate and key, read at start-up before anything else is opened, so
 * a wrong path stops the server with one line; null when none is configured.
 */
export function tlsCredentials(config: Config['telnet']): TlsCredentials | null {
  if (!config.enabled || (config.tlsCert === '' && config.tlsKey === '')) return null;
  if (config.tlsCert === '' || config.tlsKey === '') throw new ConfigError('[telnet] tls_cert and tls_key go together: set both for the TLS listener, or neither');
  return { cert: readPem(config.tlsCert, 'tls_cert'), key: readPem(config.tlsKey, 'tls_key') };
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** The one line a refused plain connection gets. */
const REFUSED: Readonly<Record<Refusal, string>> = {
  shutdown: 'The server is shutting down.',
  max_connections: 'The server is full; try again later.',
  max_connections_per_address: 'Too many connections from your address; close one and try again.',
};

export class TelnetServer {
  private readonly o: TelnetServerOptions;
  private readonly servers: Server[] = [];
  private readonly connections = new Set<TelnetConnection>();
  /** Under `serve --workers` the primary counts for the host; otherwise this server counts its own. */
  private readonly slots: ConnectionSlots;
  /** Accepted sockets not yet a connection: waiting for their slot or their TLS handshake. */
  private readonly unready = new Set<Socket>();
  /** Connections gone but still logging their session out. */
  private readonly releasing = new Set<Promise<void>>();
  private stopping = false;
  /** Where the listeners listen and since when (epoch seconds), for MSSP. */
  private listening = { port: 0, tlsPort: null as number | null, since: 0 };

  constructor(options: TelnetServerOptions) {
    this.o = options;
    this.slots = cluster.isWorker ? workerSlots() : localSlots(options.config);
    // Ends reach every instance over the bus; the connection's own stream, if any, ends it too.
    options.bus.subscribe((event) => {
      if (event.type !== 'session.ended') return;
      const ended = new Set(event.sessionIds);
      for (const connection of this.connections) {
        const id = connection.sessionId;
        if (id !== null && ended.has(id)) connection.sessionEnded(event.reason);
      }
    });
  }

  async start(): Promise<TelnetAddresses> {
    const { config, tls: credentials } = this.o;
    const plain = createServer((socket) => void this.accept(socket, null));
    this.servers.push(plain);
    const port = await listen(plain, config.port, config.host);
    let tlsPort: number | null = null;
    if (credentials) {
      // TCP first, TLS on top: a connection counts from its accept, not from the end of its handshake.
      const context = createSecureContext({ ...credentials, minVersion: 'TLSv1.2' });
      const tls = createServer((socket) => void this.accept(socket, context));
      this.servers.push(tls);
      tlsPort = await listen(tls, config.tlsPort, config.tlsHost || config.host);
    }
    this.listening = { port, tlsPort, since: Math.floor(Date.now() / 1000) };
    return { port, tlsPort };
  }

  /** How many connections are open (for tests and metrics). */
  get size(): number {
    return this.connections.size;
  }

  /** A TCP connection: its slot, then (TLS) its handshake, then a TelnetConnection. */
  private async accept(socket: Socket, tls: SecureContext | null): Promise<void> {
    socket.on('error', (err) => this.o.logger.debug('Telnet connection error', { error: err.message }));
    const peer = socket.remoteAddress ?? 'unknown';
    const address = addressKey(peer);
    this.unready.add(socket);
    const refusal = this.stopping ? 'shutdown' : await this.slots.take(address);
    this.unready.delete(socket);
    if (refusal) return this.refuse(socket, refusal, tls !== null, peer);
    // Gone while its slot was asked for (the client hung up, or the server stops).
    if (this.stopping || socket.destroyed) {
      this.slots.release(address);
      socket.destroy();
      return;
    }
    if (!tls) {
      socket.once('close', () => this.slots.release(address));
      this.open(socket, address, peer, false);
      return;
    }
    const secure = new TLSSocket(socket, { isServer: true, secureContext: tls });
    const failed = (err: Error) => this.o.logger.debug('Telnet TLS handshake failed', { peer, error: err.message });
    const timeout = setTimeout(() => {
      this.o.logger.debug('Telnet TLS handshake timed out', { peer });
      secure.destroy();
    }, this.o.config.handshakeTimeoutSeconds * 1000);
    this.unready.add(secure);
    secure.on('error', failed);
    secure.once('close', () => {
      clearTimeout(timeout);
      this.unready.delete(secure);
      this.slots.release(address);
    });
    secure.once('secure', () => {
      clearTimeout(timeout);
      this.unready.delete(secure);
      secure.off('error', failed);
      this.open(secure, address, peer, true);
    });
  }

  /**
   * Tells a plain client why (a TLS one would need a handshake to be told) and closes at once:
   * waiting for the client to hang up would let it hold a descriptor as long as it likes.
   */
  private refuse(socket: Socket, refusal: Refusal, tls: boolean, peer: string): void {
    this.o.logger.warn('Telnet connection refused', { peer, reason: refusal, tls, open: this.connections.size });
    if (!tls) socket.end(`${REFUSED[refusal]}\r\n`);
    // The line is in the kernel's buffer already (a new socket's is empty), which sends it before the FIN.
    socket.destroy();
  }

  /** A connection's log lines carry its peer address (and, once logged in, its username: TelnetConnection.log). */
  private open(socket: Socket, address: string, peer: string, tls: boolean): void {
    const { config, logger } = this.o;
    const opened = Date.now();
    const connection = new TelnetConnection(socket, { services: this.o.services, config, logger, version: this.o.version, address, peer, listening: this.listening });
    this.connections.add(connection);
    socket.once('close', () => {
      this.connections.delete(connection);
      connection.log.info('Telnet connection closed', { tls, compressed: connection.terminal.compressed, duration_ms: Date.now() - opened, open: this.connections.size });
      const released = connection.finished();
      this.releasing.add(released);
      void released.finally(() => this.releasing.delete(released));
    });
    connection.log.info('Telnet connection', { tls, open: this.connections.size });
    connection.start();
  }

  /** Stops listening, tells every player the server shuts down, and logs their sessions out. */
  async stop(): Promise<void> {
    this.stopping = true;
    const closing = this.servers.map(closeServer);
    for (const socket of this.unready) socket.destroy();
    this.slots.close();
    const open = [...this.connections];
    for (const connection of open) connection.sessionEnded('shutdown');
    await Promise.all([...open.map((c) => c.finished()), ...this.releasing]);
    await Promise.all(closing);
  }
}
