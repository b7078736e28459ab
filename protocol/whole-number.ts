/**
 * A number given as text (a path parameter): plain decimal digits,
 * at most 9 of them, so always a safe integer; undefined otherwise.
 */
export function wholeNumber(text: string): number | undefined {
  return /^\d{1,9}$/.test(text) ? Number(text) : undefined
}
