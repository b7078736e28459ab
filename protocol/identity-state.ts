/** Configuration the gateway needs to apply transport rules. Never secrets. */
export interface TransportConfig {
  hostname: string
  /** `*`, an exact origin, or `*.domain.tld`; '' (a device not personalised) none besides the device's own. */
  origin: string
  hsts: boolean
  /** Request completion timeout in 0.5 s units; 0 disables. */
  dosprot: number
}

/** The auth (identity) actor's read model, published on `hem.<devid>.evt.auth.state`. */
export interface IdentityState {
  /**
   * The raw Ed25519 public key (base64url) of this auth incarnation's bearer tokens: every service
   * verifies tokens with it. A new one means a new incarnation, whose predecessor's tokens are void.
   */
  token_key: string
  inited: boolean
  /** P, while and after the disks are formatted at personalisation: `status<N>` or `done`. */
  format?: string
  ctx: number
  trusted_ts: boolean
  /** Config `allow_keysearch`: a `^`-anchored key search may go without a token. */
  allow_keysearch: boolean
  /** P: config `storage_mode` (Disk 0 at power-up, Disk 1 cipher). */
  storage_mode?: number
  transport: TransportConfig
  /** False when the journal did not verify at boot (fls_state 0x08). */
  intact: boolean
}
