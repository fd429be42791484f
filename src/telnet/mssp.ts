/**
 * MSSP (MUD Server Status Protocol, telnet option 70): what MUD directories and crawlers read
 * of a server when it offers MSSP and they agree: its name, how many play, since when it runs,
 * its codebase, ports and protocols, from configuration and the running server. Sent as
 * IAC SB MSSP (MSSP_VAR name MSSP_VAL value)… IAC SE.
 */
import { MSSP, subnegotiation } from './protocol.ts';

const MSSP_VAR = 1;
const MSSP_VAL = 2;

/** Variable name → value (or values, each sent after its own MSSP_VAL). */
export type MsspVariables = Record<string, string | number | readonly (string | number)[]>;

/** Bytes MSSP uses as delimiters (and IAC) cannot be part of a name or value. */
const clean = (value: string | number): string => String(value).replace(/[\x00-\x02\xff]/g, '');

export function msspMessage(variables: MsspVariables): Buffer {
  const bytes: number[] = [];
  for (const [name, value] of Object.entries(variables)) {
    bytes.push(MSSP_VAR, ...Buffer.from(clean(name), 'utf8'));
    for (const each of typeof value === 'object' ? value : [value]) bytes.push(MSSP_VAL, ...Buffer.from(clean(each), 'utf8'));
  }
  return subnegotiation(MSSP, Buffer.from(bytes));
}
