/**
 * How many event streams one account and one client address may hold (GET /events), in one
 * place behind a small interface: this instance counts its own streams; a store shared by
 * every instance can take its place without the streams changing.
 */

/** Who opens a stream. */
export interface StreamHolder {
  accountId: number;
  /** The client address as the per-address limits key it. */
  address: string;
}

/** A place taken for one stream; given back once, when the stream ends. */
export interface StreamTicket {
  release(): void;
}

/** Which limit refused a stream. */
export type StreamLimit = 'account' | 'address';

export interface StreamQuota {
  /** Takes a place for one more stream of `holder`, or names the limit that is full. */
  acquire(holder: StreamHolder): Promise<StreamTicket | StreamLimit>;
}

/** Counts the streams of this instance. */
export class LocalStreamQuota implements StreamQuota {
  private readonly perAccount: number;
  private readonly perAddress: number;
  private readonly accounts = new Map<number, number>();
  private readonly addresses = new Map<string, number>();

  constructor(limits: { streamsPerAccount: number; streamsPerAddress: number }) {
    this.perAccount = limits.streamsPerAccount;
    this.perAddress = limits.streamsPerAddress;
  }

  async acquire({ accountId, address }: StreamHolder): Promise<StreamTicket | StreamLimit> {
    if ((this.accounts.get(accountId) ?? 0) >= this.perAccount) return 'account';
    if ((this.addresses.get(address) ?? 0) >= this.perAddress) return 'address';
    change(this.accounts, accountId, 1);
    change(this.addresses, address, 1);
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        change(this.accounts, accountId, -1);
        change(this.addresses, address, -1);
      },
    };
  }
}

/** Counts up or down, forgetting keys that reach zero (so the maps hold only open streams). */
function change<K>(counts: Map<K, number>, key: K, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
