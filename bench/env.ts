/** The bench's settings from the environment: a clear error for a value that is not one. */

/** A positive number (an integer when `integer`), or `fallback` when the variable is unset or blank. */
export function positiveNumberEnv(name: string, fallback: number, integer: boolean): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new Error(`${name} must be a positive ${integer ? 'integer' : 'number'}, got '${raw}'`);
  }
  return value;
}

/** Comma-separated positive numbers, ascending, or `fallback` when unset or blank. */
export function positiveListEnv(name: string, fallback: number[]): number[] {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const values = raw.split(',').map((part) => Number(part.trim()));
  if (values.some((v) => !Number.isFinite(v) || v <= 0)) throw new Error(`${name} must be comma-separated positive numbers, got '${raw}'`);
  return values.sort((a, b) => a - b);
}
