/** Query integers arrive as strings; the contract has already checked their range. */
export function queryInt(value: unknown, fallback: number): number {
  return value === undefined ? fallback : Number(value);
}
