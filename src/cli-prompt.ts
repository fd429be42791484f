/** Terminal prompts for the CLI; `hidden` input (passwords) is not echoed. */
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';

export async function prompt(question: string, options: { hidden?: boolean } = {}): Promise<string> {
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stdout.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  try {
    const answer = rl.question(question);
    muted = options.hidden === true;
    return await answer;
  } finally {
    if (options.hidden) process.stdout.write('\n');
    rl.close();
  }
}
