// image/'s face free of node: an image's header read as the device reads it, so that the
// management app refuses a file that is no image of the kind before sending it.
export { ImageFormatError } from './errors.js'
export { HEADER_BYTES, MAX_IMAGE_BYTES, parseHeader, type ImageKind } from './parse-header.js'
