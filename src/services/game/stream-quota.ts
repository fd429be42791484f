/**
 * How many event streams one account and one client address may hold (GET /events, the telnet
 * door), in one place behind a small interface: this instance counts its own streams, and with
 * several instances on one database adds the streams the others hold, as their leases in the
 * database say (docs/decisions.md, "Stream limits").
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

/** Open streams that other instances hold, of an account and of an address. */
export type StreamsElsewhere = (holder: StreamHolder) => Promise<{ account: number; address: number }>;

/**
 * Counts the streams of this instance, plus, given `elsewhere`, those of the other instances.
 * Theirs are read before this instance's are counted and taken, with nothing awaited in between,
 * so this instance never overshoots; two instances taking the last place at the same moment may
 * (by one stream each), which a limit against exhaustion can afford.
 */
export class CountedStreamQuota implements StreamQuota {
  private readonly perAccount: number;
  private readonly perAddress: number;
  private readonly elsewhere: StreamsElsewhere | null;
  private readonly accounts = new Map<number, number>();
  private readonly addresses = new Map<string, number>();

  constructor(limits: { streamsPerAccount: number; streamsPerAddress: number }, elsewhere: StreamsElsewhere | null = null) {
    this.perAccount = limits.streamsPerAccount;
    this.perAddress = limits.streamsPerAddress;
    this.elsewhere = elsewhere;
  }

  async acquire(holder: StreamHolder): Promise<StreamTicket | StreamLimit> {
    const { accountId, address } = holder;
    const others = this.elsewhere ? await this.elsewhere(holder) : { account: 0, address: 0 };
    if ((this.accounts.get(accountId) ?? 0) + others.account >= this.perAccount) return 'account';
    if ((this.addresses.get(address) ?? 0) + others.address >= this.perAddress) return 'address';
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
