/**
 * Option negotiation (RFC 855, with the loop protection of RFC 1143's states): which options
 * are on at each end, what to answer a client's WILL/WONT/DO/DONT, and how the server asks for
 * options itself. Options this server does not speak are refused; an answer that matches the
 * current state is not answered again, so two ends can never bounce a request forever.
 */
import { CHARSET, COMPRESS2, DO, DONT, ECHO, EOR, GMCP, MSSP, MXP, NAWS, negotiation, TTYPE, WILL, WONT, type Verb } from './protocol.ts';

/** `want*`: the server asked and waits for the answer. */
type OptionState = 'no' | 'yes' | 'wantYes' | 'wantNo';

/**
 * Options the server may perform itself (IAC WILL). ECHO only while a password is typed, and
 * only when the server asked; COMPRESS2 unless `[telnet] compression` is off.
 */
export const LOCAL_OPTIONS: ReadonlySet<number> = new Set([GMCP, CHARSET, ECHO, EOR, MSSP, MXP, COMPRESS2]);
/** Options the server lets the client perform (IAC DO): window size, terminal type, character set. */
const REMOTE = new Set([NAWS, TTYPE, CHARSET]);

export interface NegotiationEvents {
  /** An option at the server's end (local) or the client's end (remote) went on or off. */
  changed(side: 'local' | 'remote', option: number, enabled: boolean): void;
  /** The client refused an option the server offered or asked for. */
  refused?(side: 'local' | 'remote', option: number): void;
}

export class Negotiation {
  private readonly send: (bytes: Buffer) => void;
  private readonly events: NegotiationEvents;
  private readonly local = new Map<number, OptionState>();
  private readonly remote = new Map<number, OptionState>();
  private readonly performs: ReadonlySet<number>;

  /** `performs`: the options of LOCAL_OPTIONS this connection agrees to perform. */
  constructor(send: (bytes: Buffer) => void, events: NegotiationEvents, performs: ReadonlySet<number> = LOCAL_OPTIONS) {
    this.send = send;
    this.events = events;
    this.performs = performs;
  }

  /** Whether the option is on at the server's end. */
  localOn(option: number): boolean {
    return this.local.get(option) === 'yes';
  }

  /** Offers to perform an option (IAC WILL). */
  offer(option: number): void {
    const state = this.local.get(option) ?? 'no';
    if (state === 'yes' || state === 'wantYes') return;
    this.local.set(option, 'wantYes');
    this.send(negotiation(WILL, option));
  }

  /** Stops performing an option (IAC WONT). */
  withdraw(option: number): void {
    const state = this.local.get(option) ?? 'no';
    if (state === 'no' || state === 'wantNo') return;
    this.local.set(option, 'wantNo');
    this.send(negotiation(WONT, option));
  }

  /** Asks the client to perform an option (IAC DO). */
  ask(option: number): void {
    const state = this.remote.get(option) ?? 'no';
    if (state === 'yes' || state === 'wantYes') return;
    this.remote.set(option, 'wantYes');
    this.send(negotiation(DO, option));
  }

  /** A client's WILL, WONT, DO or DONT. */
  receive(verb: Verb, option: number): void {
    if (verb === WILL || verb === WONT) this.answer('remote', verb === WILL, option);
    else this.answer('local', verb === DO, option);
  }

  private answer(side: 'local' | 'remote', on: boolean, option: number): void {
    const states = side === 'local' ? this.local : this.remote;
    const state = states.get(option) ?? 'no';
    const [agree, refuse] = side === 'local' ? [WILL, WONT] as const : [DO, DONT] as const;
    if (on) {
      if (state === 'yes') return;
      const supported = side === 'local' ? this.performs.has(option) && (option !== ECHO || state === 'wantYes') : REMOTE.has(option);
      if (!supported || state === 'wantNo') {
        states.set(option, 'no');
        // A refusal of our own WONT/DONT needs no second answer; anything else is refused.
        if (state !== 'wantNo') this.send(negotiation(refuse, option));
        return;
      }
      states.set(option, 'yes');
      if (state === 'no') this.send(negotiation(agree, option));
      this.events.changed(side, option, true);
      return;
    }
    if (state === 'no') return;
    states.set(option, 'no');
    if (state === 'yes') this.send(negotiation(refuse, option));
    if (state === 'wantYes') this.events.refused?.(side, option);
    else this.events.changed(side, option, false);
  }
}
