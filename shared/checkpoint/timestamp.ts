/** Reading a checkpoint's timestamps quickly, with Date.parse's answers. */

const DAYS_IN_MONTH = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** The two decimal digits at `i`, or -1. */
function twoDigits(text: string, i: number): number {
  const a = text.charCodeAt(i) - 48;
  const b = text.charCodeAt(i + 1) - 48;
  return a >= 0 && a <= 9 && b >= 0 && b <= 9 ? a * 10 + b : -1;
}

/**
 * `Date.parse(value)`, worked out by hand for the form `toISOString()`
 * writes (`YYYY-MM-DDTHH:MM:SS.sssZ`) when every field is in range, and left
 * to Date.parse for any other text, so the answer is always Date.parse's.
 * Listing a directory checks two timestamps a step for every task, nearly
 * all of them in that form, and Date.parse costs three times the hand
 * reading.
 */
export function parseTimestamp(value: string): number {
  if (
    value.length === 24 &&
    value.charCodeAt(4) === 45 && // -
    value.charCodeAt(7) === 45 &&
    value.charCodeAt(10) === 84 && // T
    value.charCodeAt(13) === 58 && // :
    value.charCodeAt(16) === 58 &&
    value.charCodeAt(19) === 46 && // .
    value.charCodeAt(23) === 90 // Z
  ) {
    const century = twoDigits(value, 0);
    const yy = twoDigits(value, 2);
    const month = twoDigits(value, 5);
    const day = twoDigits(value, 8);
    const hour = twoDigits(value, 11);
    const minute = twoDigits(value, 14);
    const second = twoDigits(value, 17);
    const ms2 = twoDigits(value, 20);
    const ms3 = value.charCodeAt(22) - 48;
    const year = century * 100 + yy;
    // Years below 100 are left to Date.parse: Date.UTC reads them as 19xx.
    if (
      century >= 1 &&
      yy >= 0 &&
      month >= 1 &&
      month <= 12 &&
      day >= 1 &&
      hour >= 0 &&
      hour <= 23 &&
      minute >= 0 &&
      minute <= 59 &&
      second >= 0 &&
      second <= 59 &&
      ms2 >= 0 &&
      ms3 >= 0 &&
      ms3 <= 9
    ) {
      const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
      if (day <= (month === 2 && leap ? 29 : DAYS_IN_MONTH[month]))
        return Date.UTC(year, month - 1, day, hour, minute, second, ms2 * 10 + ms3);
    }
  }
  return Date.parse(value);
}
