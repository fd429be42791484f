/**
 * The browser play client (built from web/ into public/play/ by scripts/build-play.ts) at
 * /play, and browsers that open `/` sent there. Outside the contract like the docs: these are
 * pages, not API answers.
 */
import path from 'node:path';
import express, { Router } from 'express';
import { pageHeaders } from '../middleware/page-headers.ts';

const PLAY_DIR = path.join(import.meta.dirname, '..', '..', '..', 'public', 'play');

/**
 * Only this server's own files run or style the page, it talks only to this server, and it
 * may not be framed: no inline script or style at all (the page is built with textContent,
 * never markup, so server data cannot add any).
 */
const securityHeaders = pageHeaders(
  [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self'",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ],
  // A new build must reach the page at once; the files are small.
  { 'Referrer-Policy': 'no-referrer', 'Cache-Control': 'no-cache' },
);

export function playRouter(): Router {
  const router = Router();
  // A browser asks for HTML first; API clients (JSON, `*/*` or no Accept) keep GET /'s JSON answer.
  router.get('/', (req, res, next) => {
    res.vary('Accept');
    if (req.accepts(['application/json', 'text/html']) === 'text/html') return res.redirect(302, '/play');
    next();
  });
  router.use('/play', securityHeaders);
  // The page names its files by absolute path, so /play needs no trailing slash.
  router.get('/play', (_req, res) => res.sendFile(path.join(PLAY_DIR, 'index.html'), { cacheControl: false }));
  router.use('/play', express.static(PLAY_DIR, { cacheControl: false }));
  return router;
}
