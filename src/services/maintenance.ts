/**
 * Periodic upkeep (expired sessions, expired temporary accounts, old chat). Each task runs
 * once at start, then on its interval; timers do not keep the process alive.
 */
import type { Logger } from '../logging/logger.ts';

export interface PeriodicTask {
  name: string;
  intervalMs: number;
  /** Returns how many rows it removed. */
  run(): Promise<number>;
}

export interface Maintenance {
  stop(): void;
}

async function runTask(task: PeriodicTask, logger: Logger): Promise<void> {
  try {
    const removed = await task.run();
    if (removed > 0) logger.info('Maintenance task removed rows', { task: task.name, removed });
  } catch (err) {
    logger.error('Maintenance task failed', { task: task.name, error: (err as Error).message });
  }
}

export async function startMaintenance(tasks: readonly PeriodicTask[], logger: Logger): Promise<Maintenance> {
  for (const task of tasks) await runTask(task, logger);
  const timers = tasks.map((task) => {
    const timer = setInterval(() => void runTask(task, logger), task.intervalMs);
    timer.unref();
    return timer;
  });
  return { stop: () => timers.forEach(clearInterval) };
}
