import Transport from 'winston-transport';

/** Keeps log entries in memory so tests can assert on what was (and was not) logged. */
export class MemoryTransport extends Transport {
  readonly entries: Array<Record<string, unknown>> = [];

  override log(info: Record<string, unknown>, next: () => void): void {
    this.entries.push(info);
    next();
  }

  text(): string {
    return this.entries.map((e) => JSON.stringify(e)).join('\n');
  }
}
