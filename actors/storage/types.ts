/** The storage actor's read model, published on `hem.<devid>.evt.storage.state`. */
export interface StorageState {
  /** P only: `<sectors>:<mode>` for Disk 0 and Disk 1, mode `rw`, `ro` or `-`. */
  storage?: [string, string]
}
