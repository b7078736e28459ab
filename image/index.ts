export { checkImage, type ImageExpectations, type ImageVerdict, type RejectReason } from './check-image.js'
export { ImageFormatError } from './errors.js'
export { buildImage, HEADER_BYTES, MAX_IMAGE_BYTES, parseHeader, type ImageHeader, type ImageKind } from './header.js'
export {
  bytesSource,
  extractArchive,
  fileSource,
  packDirectory,
  walkArchive,
  type ArchiveEntry,
  type ArchiveSource,
} from './tar.js'
export { FACTORY_WEBROOT_IMAGE, FirmwareManifestError, loadFirmware, signBuild } from './firmware-manifest.js'
