const MINUTE_MS = 60_000;

/**
 * Formats like Statuspage: `2026-11-20T14:03:11.512Z` in UTC, or `2026-11-20T09:03:11.512-05:00`
 * when the page is in another zone.
 */
export function formatTimestamp(date: Date, offsetMinutes = 0): string {
  if (offsetMinutes === 0) return date.toISOString();
  const local = new Date(date.getTime() + offsetMinutes * MINUTE_MS).toISOString().slice(0, -1);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const abs = Math.abs(offsetMinutes);
  const hours = String(Math.floor(abs / 60)).padStart(2, '0');
  const minutes = String(abs % 60).padStart(2, '0');
  return `${local}${sign}${hours}:${minutes}`;
}

/** The UTC offset, in minutes, a timestamp was written with (0 for `Z` or no offset). */
export function offsetOf(timestamp: string): number {
  const match = /([+-])(\d{2}):(\d{2})$/.exec(timestamp);
  if (!match) return 0;
  const minutes = Number(match[2]) * 60 + Number(match[3]);
  return match[1] === '-' ? -minutes : minutes;
}

/** Formats the calendar date (`2024-03-01`) as seen at the given offset. */
export function formatDate(date: Date, offsetMinutes = 0): string {
  return formatTimestamp(date, offsetMinutes).slice(0, 10);
}
