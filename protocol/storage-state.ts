/** The storage actor's read model, published on `hem.<devid>.evt.storage.state`. */
export interface StorageState {
  /** P only: `<sectors>:<mode>` for Disk 0 and Disk 1, mode `rw`, `ro` or `-`. */
  storage?: [string, string]
  /** The identity's `inited` the disks last followed: false once a wipeout has made them unformatted. */
  inited?: boolean
}
