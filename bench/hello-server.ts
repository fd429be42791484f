/**
 * The hot suite's baseline (bench/hot.ts): a bare Express 5 app answering `GET /` with a JSON
 * hello, Express defaults and no middleware, on the port named by HELLO_PORT. What the game
 * routes are compared with, so it runs on the same Node binary and core as the real server.
 */
import express from 'express';

const app = express();
app.get('/', (_req, res) => {
  res.json({ message: 'hello' });
});
app.listen(Number(process.env.HELLO_PORT), '127.0.0.1');
