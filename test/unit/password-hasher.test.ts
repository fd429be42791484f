/**
 * The bcrypt pool serves requests first come, first served. Each request's task carries its
 * abort signal; Piscina used to send such a task to the back of its queue whenever it found
 * the thread busy, and under a steady stream of logins some waited until their clients gave up.
 */
import { expect } from 'chai';
import { BcryptPool } from '../../src/services/accounts/password-hasher.ts';
import { requestContext } from '../../src/logging/logger.ts';

describe('bcrypt pool', function () {
  this.timeout(60_000);
  let pool: BcryptPool;
  before(() => {
    pool = new BcryptPool(4, 1);
  });
  after(async () => {
    await pool.close();
  });

  it('verifies in the order asked, under a steady stream of requests with abort signals', async () => {
    const hash = await pool.hash('correct horse');
    const asked: number[] = [];
    const done: number[] = [];
    let next = 0;
    // Each client asks again as soon as it is answered, as players logging in and out do.
    const client = async (): Promise<void> => {
      while (next < 120) {
        const id = next++;
        asked.push(id);
        const signal = new AbortController().signal;
        const ok = await requestContext.run({ requestId: `r${id}`, signal }, () => pool.verify('correct horse', hash));
        expect(ok).to.equal(true);
        done.push(id);
      }
    };
    await Promise.all(Array.from({ length: 12 }, client));
    expect(done).to.deep.equal(asked);
  });

  it('drops a waiting task whose client has gone, and serves the ones behind it', async () => {
    const hash = await pool.hash('correct horse');
    const gone = new AbortController();
    const ask = (signal: AbortSignal) => requestContext.run({ requestId: 'r', signal }, () => pool.verify('correct horse', hash));
    const first = ask(new AbortController().signal);
    const dropped = ask(gone.signal);
    const last = ask(new AbortController().signal);
    gone.abort(new Error('client gone'));
    expect(await first).to.equal(true);
    let reason: unknown;
    await dropped.catch((err: unknown) => (reason = err));
    expect((reason as Error).message).to.equal('client gone');
    expect(await last).to.equal(true);
  });
});
