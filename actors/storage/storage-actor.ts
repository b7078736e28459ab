import type { NatsConnection } from '@nats-io/transport-node'
import type { Logger } from 'pino'
import type { EventFromLogic } from 'xstate'
import type { DiskHandle, Hal } from '../../hal/index.js'
import {
  type CommandReply,
  type CommandRequest,
  type DiskMode,
  fail,
  type IdentityState,
  operationAccess,
  SerialQueue,
  type StorageState,
  type SystemState,
} from '../../protocol/index.js'
import {
  bootMode,
  disk1Cipher,
  type diskMachine,
  machineRegistry,
  versioned,
  type DiskNumber,
} from '../../machines/index.js'
import { followReadModels, type ReadModelBus, ServiceHost } from '../../bus/index.js'
import { BearerGuard, type JournalPort, journalSubject, MachineRunner } from '../host/index.js'
import { NbdServer, type NbdListen } from './nbd-server.js'
import { storageScope } from './storage-scope.js'

const DEFAULT_STORAGE_MODE = 0x51

export interface StorageActorOptions {
  nc: NatsConnection
  hal: Hal
  journal: JournalPort
  logger: Logger
  /** Export unlocked disks over NBD here; no export when undefined. */
  nbd?: NbdListen
}

interface Disk {
  runner: MachineRunner<typeof diskMachine>
  /** Open exactly while the disk is unlocked: a locked disk has no way in through the HAL. */
  handle?: DiskHandle
}

/**
 * The embedded disks (P): one `disk` machine each, journaled transitions, and the HAL handle
 * that an unlocked disk holds. It follows the auth actor's read model: a disk is formatted once
 * personalisation's format has finished, takes its power-up mode from `storage_mode` (Disk 0)
 * or stays locked (Disk 1), and a wipeout makes both unformatted.
 */
export class StorageActor {
  readonly host: ServiceHost<StorageState>
  private readonly identity: ReadModelBus
  private readonly guard: BearerGuard
  private followed: boolean | undefined
  private readonly disks: Disk[]
  /** Following the identity and the commands, one at a time: each sees the disks the one before left. */
  private readonly serial = new SerialQueue()
  private nbd: NbdServer | undefined

  constructor(private readonly o: StorageActorOptions) {
    this.disks = ([0, 1] as const).map((disk) => ({
      runner: new MachineRunner(versioned(machineRegistry.disk, String(disk)), o.journal, undefined, { disk }),
    }))
    this.guard = new BearerGuard({
      identity: () => this.identity.readModel<IdentityState>('auth'),
      clock: o.hal.clock,
      journal: o.journal,
    })
    // Every operation acts for the principal its own check of the bearer token found; the disk is the one its scope
    // names.
    const access = operationAccess.storage
    this.host = new ServiceHost<StorageState>(
      o.nc,
      o.hal.devid,
      'storage',
      {
        unlock: this.guard.operation(access, (req) => this.unlock(req)),
        unlock_ro: this.guard.operation(access, (req) => this.unlock(req, 'ro')),
        unlock_rw: this.guard.operation(access, (req) => this.unlock(req, 'rw')),
        lock: this.guard.operation(access, (req) => this.lock(req)),
      },
      o.logger,
    )
    this.identity = followReadModels(
      o.nc,
      o.hal.devid,
      'storage',
      ['auth', 'system'],
      o.logger,
      () =>
        void this.follow().catch((err: Error) =>
          o.logger.error({ err: err.message }, 'the disks could not follow the identity'),
        ),
    )
  }

  /** Where the NBD export listens, once started with one. */
  get nbdAddress(): string | undefined {
    return this.nbd?.address
  }

  async start(): Promise<void> {
    try {
      if (this.o.nbd && this.o.hal.disks) this.nbd = await NbdServer.listen(this.o.nbd, this.o.logger)
      await this.identity.whenReady()
      await this.follow()
    } catch (err) {
      this.identity.close()
      await this.nbd?.close()
      throw err
    }
    this.host.start()
  }

  async stop(): Promise<void> {
    this.identity.close()
    await this.host.stop()
    await this.serial.idle()
    await this.nbd?.close()
    for (const disk of this.disks) await this.close(disk)
  }

  /** Brings the machines in line with the format and the identity; serialised with the commands. */
  private follow(): Promise<void> {
    return this.serial.run(() => this.align())
  }

  private async align(): Promise<void> {
    const identity = this.identity.readModel<IdentityState>('auth')
    // A format shows as `status<N>` while it runs (and locks the disks under us), `failed` when it did not finish:
    // whatever layout the disks hold meanwhile (the last format's, or this one's before it is journaled done) is none.
    const formatting = identity?.format !== undefined && identity.format !== 'done'
    const formatted = this.o.hal.disks?.layout() !== undefined && identity?.inited === true && !formatting
    const failed = this.failState() !== 0
    for (const [index, disk] of this.disks.entries()) {
      // A device in a fail state holds no disk open: what it would serve can no longer be trusted.
      if (failed && unlocked(disk)) {
        await disk.runner.send({ type: 'LOCK' })
        await this.close(disk)
        continue
      }
      if (!formatted && !disk.runner.matches('unformatted')) {
        await this.close(disk)
        await disk.runner.send({ type: 'ERASED' })
      } else if (formatted && disk.runner.can({ type: 'FORMATTED' })) {
        await disk.runner.send({ type: 'FORMATTED' })
        const mode = bootMode(index as DiskNumber, identity?.storage_mode ?? DEFAULT_STORAGE_MODE)
        if (mode !== 'locked' && !failed) await this.open(index as DiskNumber, mode)
      }
    }
    this.followed = identity?.inited
    this.publish()
  }

  /** fls_state as the health machine (in the system service) publishes it; 0 until known. */
  private failState(): number {
    return this.identity.readModel<SystemState>('system')?.status.fls_state ?? 0
  }

  private publish(): void {
    const { disks, storage } = this.o.hal
    const followed = this.followed !== undefined ? { inited: this.followed } : {}
    if (!disks) return this.host.publishState(followed)
    const layout = disks.layout() ?? storage
    const sectors = [layout.disk0Sectors, layout.disk1Sectors]
    const shown = this.disks.map((disk, i) => `${sectors[i]}:${unlocked(disk) ? disk.runner.state : '-'}`)
    this.host.publishState({ storage: shown as [string, string], ...followed })
  }

  /** `GET /api/storage/unlock[/ro|/rw]`: the disk, and without a suffix the mode, from the token scope. */
  private unlock(req: CommandRequest, requested?: DiskMode): Promise<CommandReply> {
    const mode = (rw: boolean): DiskMode => requested ?? (rw ? 'rw' : 'ro')
    return this.command(
      req,
      (rw) => unlockEvent(mode(rw)),
      async (disk, rw) => {
        if (requested === 'rw' && !rw)
          return this.guard.denied(req, 'Unlocking for writing needs a storage:disk<N>:rw scope')
        await this.open(disk, mode(rw), req)
        return { status: 200 }
      },
    )
  }

  /** `GET /api/storage/lock`: the disk named by the token scope. */
  private lock(req: CommandRequest): Promise<CommandReply> {
    return this.command(
      req,
      () => ({ type: 'LOCK' }),
      async (disk) => {
        const target = this.disks[disk]!
        await target.runner.send({ type: 'LOCK' }, [], journalSubject(req.principal).subject)
        await this.close(target)
        return { status: 200 }
      },
    )
  }

  /**
   * One command on the disk its token's scope names. The machine is asked whether the disk takes
   * the command's `event` before the HAL is touched (an unformatted disk is never opened) and
   * before the fail state, which the contract answers second.
   */
  private command(
    req: CommandRequest,
    event: (rw: boolean) => DiskEvent,
    run: (disk: DiskNumber, rw: boolean) => Promise<CommandReply>,
  ): Promise<CommandReply> {
    return this.serial.run(async (): Promise<CommandReply> => {
      if (!this.o.hal.disks) return fail(404, 'not_found', 'This device has no disks')
      const named = storageScope(req.principal?.scope ?? '')
      if (!named || (named.disk !== 0 && named.disk !== 1))
        return fail(406, 'bad_disk', 'The token scope names no disk of this device')
      if (!this.disks[named.disk]!.runner.can(event(named.rw))) return notFormatted()
      // The fail state is the health machine's (the system service's), not the disk's: checked here.
      if (this.failState() !== 0)
        return fail(409, 'device_fault', 'The device is in a fail state (see fls_state in status)')
      const reply = await run(named.disk, named.rw)
      this.publish()
      return reply
    })
  }

  /**
   * Opens the HAL handle first, so that a disk the HAL cannot open never shows as unlocked, and
   * closes the one it replaces only once the change is journaled: else the disk stays as it was.
   */
  private async open(disk: DiskNumber, mode: DiskMode, req?: CommandRequest): Promise<void> {
    const target = this.disks[disk]!
    const old = target.handle
    let handle = old
    if (handle?.mode !== mode || handle.locked) {
      const cipher =
        disk === 1
          ? disk1Cipher(this.identity.readModel<IdentityState>('auth')?.storage_mode ?? DEFAULT_STORAGE_MODE)
          : undefined
      handle = await this.o.hal.disks!.open(disk, mode, cipher)
    }
    try {
      await target.runner.send(unlockEvent(mode), [], journalSubject(req?.principal).subject)
    } catch (err) {
      if (handle !== old) await handle.close()
      throw err
    }
    target.handle = handle
    // Serving the new handle withdraws the old one's export.
    this.nbd?.serve(exportName(disk), handle)
    if (handle !== old) await old?.close()
  }

  private async close(disk: Disk): Promise<void> {
    const handle = disk.handle
    disk.handle = undefined
    if (handle) this.nbd?.withdraw(exportName(handle.disk))
    await handle?.close()
  }
}

/** Whether the disk is open, read-only or read-write. */
function unlocked(disk: Disk): boolean {
  return disk.runner.matches('ro') || disk.runner.matches('rw')
}

type DiskEvent = EventFromLogic<typeof diskMachine>

function unlockEvent(mode: DiskMode): DiskEvent {
  return { type: mode === 'rw' ? 'UNLOCK_RW' : 'UNLOCK_RO' }
}

/** The disk machine refuses to lock or unlock a disk that has no format. */
function notFormatted(): CommandReply {
  return fail(409, 'not_formatted', 'The disk is not formatted')
}

function exportName(disk: DiskNumber): string {
  return `disk${disk}`
}
