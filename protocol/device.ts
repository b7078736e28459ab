/** The hardware variants: P has the enclave, the disks and the management app; E has none of those. */
export type Variant = 'P' | 'E'

/** How an unlocked disk is open. */
export type DiskMode = 'ro' | 'rw'

/** The cipher a disk is encrypted with. */
export type DiskCipher = 'AES-CTR' | 'AES-XTS'
