/** The upgrade actor's read model, published on `hem.<devid>.evt.upgrade.state`. */
export interface UpgradeState {
  /** The `upgrade` machines' states. */
  fw: string
  ui: string
  /** P: the SHA-256 of the installed management-app image (`version.uis`). */
  uis?: string
  /** This boot is a new firmware's trial, and it confirmed its health (`status.fw_upgrade`). */
  fw_upgrade?: true
}
