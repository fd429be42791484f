/** Runs in a worker thread: bcrypt is CPU-bound and would otherwise stall the event loop. */
import bcrypt from 'bcryptjs';

export type BcryptTask = { op: 'hash'; password: string; rounds: number } | { op: 'verify'; password: string; hash: string };

export default function run(task: BcryptTask): string | boolean {
  return task.op === 'hash' ? bcrypt.hashSync(task.password, task.rounds) : bcrypt.compareSync(task.password, task.hash);
}
