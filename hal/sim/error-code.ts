/** The errno code (`ENOENT`, `EEXIST`, ...) of a failed system call, if it is one. */
export function errorCode(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code
}
