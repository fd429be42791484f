/**
 * Time as the database stores it: UTC text `YYYY-MM-DD HH:MM:SS`, which sorts and compares
 * correctly as a string on both SQLite and PostgreSQL.
 */
export type Clock = () => Date;

export const systemClock: Clock = () => new Date();

export function toDbTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

export function fromDbTime(text: string): Date {
  return new Date(`${text.replace(' ', 'T')}Z`);
}
