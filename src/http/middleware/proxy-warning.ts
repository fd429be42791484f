/**
 * Warns once when a proxy on this host forwards requests (`X-Forwarded-For`) that `[server]
 * trust_proxy` does not trust: every client then counts as the proxy's address in the
 * per-address limits, so one site shares one allowance of logins and event streams. The reference
 * nginx configuration (deploy/nginx/mud-server.conf) is such a proxy; the default is not to
 * trust any, since a client reaching the server directly could otherwise name any address.
 */
import { BlockList } from 'node:net';
import type { RequestHandler } from 'express';
import type { Logger } from '../../logging/logger.ts';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

/** Express's compiled `trust proxy` setting: whether the hop `index` away, at `address`, is trusted. */
type TrustFn = (address: string, index: number) => boolean;

export function untrustedProxyWarning(logger: Logger): RequestHandler {
  let warned = false;
  return (req, _res, next) => {
    if (warned || req.headers['x-forwarded-for'] === undefined) return next();
    const peer = req.socket.remoteAddress;
    if (peer === undefined || !LOOPBACK.check(peer, peer.includes(':') ? 'ipv6' : 'ipv4')) return next();
    const trusted = req.app.get('trust proxy fn') as TrustFn;
    if (trusted(peer, 0)) return next();
    warned = true;
    logger.warn(
      'Requests come through a proxy on this host (X-Forwarded-For) that [server] trust_proxy does not trust: every client counts as its address in the per-address limits. Set [server] trust_proxy = loopback (MUD_SERVER_TRUST_PROXY=loopback).',
      { proxy: peer },
    );
    next();
  };
}
