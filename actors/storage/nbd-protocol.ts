/**
 * The Network Block Device protocol's numbers (https://github.com/NetworkBlockDevice/nbd,
 * doc/proto.md), fixed-newstyle negotiation and simple replies: what hemd's export speaks.
 */
export const NBD_MAGIC = 0x4e42444d41474943n // "NBDMAGIC"
export const OPTION_MAGIC = 0x49484156454f5054n // "IHAVEOPT"
export const OPTION_REPLY_MAGIC = 0x3e889045565a9n
export const REQUEST_MAGIC = 0x25609513
export const SIMPLE_REPLY_MAGIC = 0x67446698

export const HandshakeFlag = { FIXED_NEWSTYLE: 1, NO_ZEROES: 2 } as const
export const ClientFlag = { FIXED_NEWSTYLE: 1, NO_ZEROES: 2 } as const

export const Option = {
  EXPORT_NAME: 1,
  ABORT: 2,
  LIST: 3,
  STARTTLS: 5,
  INFO: 6,
  GO: 7,
  STRUCTURED_REPLY: 8,
} as const

const ERROR_BIT = 2 ** 31
export const OptionReply = {
  ACK: 1,
  SERVER: 2,
  INFO: 3,
  ERR_UNSUP: ERROR_BIT + 1,
  ERR_POLICY: ERROR_BIT + 2,
  ERR_INVALID: ERROR_BIT + 3,
  ERR_UNKNOWN: ERROR_BIT + 6,
  ERR_TOO_BIG: ERROR_BIT + 9,
} as const

export const Info = { EXPORT: 0, NAME: 1, DESCRIPTION: 2, BLOCK_SIZE: 3 } as const

export const TransmissionFlag = { HAS_FLAGS: 1, READ_ONLY: 2, SEND_FLUSH: 4 } as const

export const Command = { READ: 0, WRITE: 1, DISC: 2, FLUSH: 3 } as const

/** The errno values a simple reply carries. */
export const Errno = { EPERM: 1, EIO: 5, EINVAL: 22, ENOSPC: 28, ESHUTDOWN: 108 } as const

/** The payload a client may send or ask for without negotiating block sizes (proto.md). */
export const MAX_PAYLOAD = 32 * 1024 * 1024
export const OPTION_HEADER_BYTES = 16
export const REQUEST_BYTES = 28
