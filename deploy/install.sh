#!/usr/bin/env bash
# Installs hemd from this checkout's build onto a Debian board as two systemd services
# (hemd-bus.service, hemd.service). The file-system layout is deploy/LAYOUT.md.
# Idempotent: a second run replaces the runtime and the units, and keeps the data dir and the env file.
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: deploy/install.sh [options]        (as root, from a checkout built with deploy/setup.sh)

Installs the built runtime into /opt/hemd, the units into /etc/systemd/system, the flags into
/etc/hemd/hemd.env (kept if present), creates the hemd user and /var/lib/hemd, then enables
and (re)starts hemd.service. See deploy/LAYOUT.md.

Options:
  --root DIR        install into DIR as if it were / (a staging tree; needs no root)
  --variant P|E     the device's variant, written into a new env file (default P)
  --backend-key FILE  the fleet backend's Ed25519 public key (PEM), installed as
                    /etc/hemd/keys/backend.pub.pem: check-in replies must be signed with it
  --vendor-key FILE   the vendor's Ed25519 public key (PEM), installed as
                    /etc/hemd/keys/vendor.pub.pem: the build and every image must be signed with it
  --factory-ca FILE   the factory CA's certificate (PEM), installed as /etc/hemd/keys/factory-ca.crt.pem
                    A first install needs all three; a later one keeps those it is not given.
                    The development keys of deploy/keys/ are refused.
  --split           run each service as its own user hemd-<service> (hemd --split, the supervisor as root
                    with a few capabilities): installs the units' split.conf drop-ins; without
                    --split they are removed and hemd runs as hemd with no capability
  --no-apt          do not apt-get install nats-server
  --no-user         do not create the hemd user and group, nor the service users hemd-<service>
  --no-systemctl    do not daemon-reload, enable or start the units
  -h, --help        show this help
EOF
}

say() { echo "install: $*"; }
fail() {
  echo "install: $*" >&2
  exit 1
}

root=''
variant=P
backend_key=''
vendor_key=''
factory_ca=''
apt=true
user=true
systemctl=true
split=false
while [ $# -gt 0 ]; do
  case "$1" in
    --root)
      [ $# -ge 2 ] || { usage >&2; exit 2; }
      root="$2"
      shift 2
      ;;
    --variant)
      [ $# -ge 2 ] || { usage >&2; exit 2; }
      variant="$2"
      shift 2
      ;;
    --backend-key | --vendor-key | --factory-ca)
      [ $# -ge 2 ] || { usage >&2; exit 2; }
      [ -f "$2" ] || { echo "install: $1 $2: no such file" >&2; exit 2; }
      file="$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"
      case "$1" in
        --backend-key) backend_key="$file" ;;
        --vendor-key) vendor_key="$file" ;;
        --factory-ca) factory_ca="$file" ;;
      esac
      shift 2
      ;;
    --split) split=true; shift ;;
    --no-apt) apt=false; shift ;;
    --no-user) user=false; shift ;;
    --no-systemctl) systemctl=false; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "install: unknown option $1" >&2; usage >&2; exit 2 ;;
  esac
done
case "$variant" in P | E) ;; *) echo "install: --variant must be P or E, not $variant" >&2; exit 2 ;; esac
if [ -n "$root" ]; then
  mkdir -p "$root"
  root="$(cd "$root" && pwd)"
  [ "$root" != / ] || root=''
fi

src="$(cd "$(dirname "$0")/.." && pwd -P)"
prefix="$root/opt/hemd"
data="$root/var/lib/hemd"
etc="$root/etc/hemd"
units="$root/etc/systemd/system"
node=/usr/bin/node

# Installing onto this host's / changes the system: that is root's. A staging tree is not.
if [ -z "$root" ] && [ "$(id -u)" != 0 ]; then fail "installing onto / needs root (or stage with --root DIR)"; fi
owner=false
[ "$(id -u)" = 0 ] && owner=true

# The units run /usr/bin/node; hemd needs Node 20.10 or later (package.json engines).
[ -x "$node" ] || fail "$node is missing: install Node.js 20.10 or later there (Debian's nodejs, or NodeSource's)"
version="$("$node" -p 'process.versions.node')"
IFS=. read -r major minor _ <<<"$version"
if [ "$major" -lt 20 ] || { [ "$major" -eq 20 ] && [ "$minor" -lt 10 ]; }; then
  fail "$node is Node $version; hemd needs 20.10 or later"
fi

[ -f "$src/dist/bin/hemd.js" ] && [ -f "$src/dist/firmware.json" ] ||
  fail "no signed build in $src/dist: run deploy/setup.sh (or npm run build) first"
[ -d "$src/node_modules" ] || fail "no node_modules in $src: run deploy/setup.sh first"

# The trust anchors: the operator's own, never the development keys whose private halves are
# published in deploy/keys/ (compared by public key, whatever certificate or PEM wraps it).
# Checked before anything is installed.
keys="$etc/keys"
if [ -z "$backend_key" ] && [ -f "$keys/backend.pub.pem" ]; then backend_key="$keys/backend.pub.pem"; fi
if [ -z "$vendor_key" ] && [ -f "$keys/vendor.pub.pem" ]; then vendor_key="$keys/vendor.pub.pem"; fi
if [ -z "$factory_ca" ] && [ -f "$keys/factory-ca.crt.pem" ]; then factory_ca="$keys/factory-ca.crt.pem"; fi
[ -n "$backend_key" ] && [ -n "$vendor_key" ] && [ -n "$factory_ca" ] ||
  fail "a new install needs the installation's keys: --backend-key FILE, --vendor-key FILE and --factory-ca FILE"
"$node" --input-type=module -e "
  const trust = await import('$src/dist/hal/trust-anchors.js')
  const { loadFirmware } = await import('$src/dist/image/firmware-manifest.js')
  const [backendKey, vendorKey, factoryRoot] = process.argv.slice(1)
  const files = { backendKey, vendorKey, factoryRoot }
  const anchors = {}
  for (const [name, file] of Object.entries(files)) {
    const flag = trust.TRUST_ANCHOR_FLAGS[name]
    try {
      anchors[name] = await trust.readTrustAnchor(name, file)
    } catch (err) {
      console.error('install: ' + err.message)
      process.exit(1)
    }
    const fingerprint = trust.trustFingerprint(anchors[name])
    if (trust.developmentKeyOf(name, anchors[name])) {
      console.error('install: ' + flag + ' ' + file + ' holds a development key of deploy/keys/ (sha256 ' +
        fingerprint + '): its private half is published, anyone can sign with it. Give this installation its own key.')
      process.exit(1)
    }
    console.log('install: ' + flag + ' sha256 ' + fingerprint)
  }
  const sign = ' (sign it: HEMD_VENDOR_KEY=FILE node dist/deploy/sign-build.js)'
  try {
    await loadFirmware('$src/dist', anchors.vendorKey)
  } catch (err) {
    console.error('install: ' + err.message + sign)
    process.exit(1)
  }
  // The app a P device installs at its first start: refused there too when not the vendor's.
  const { checkImage, bytesSource, FACTORY_WEBROOT_IMAGE } = await import('$src/dist/image/index.js')
  const { readFile } = await import('node:fs/promises')
  const app = await readFile('$src/dist/' + FACTORY_WEBROOT_IMAGE).catch(() => Buffer.alloc(0))
  const expect = { vendorKey: anchors.vendorKey, kind: 'ui', variant: 'P' }
  const verdict = await checkImage(bytesSource(app), app.length, expect)
  if (!verdict.ok) {
    console.error('install: the factory management app of the build does not verify: ' + verdict.message + sign)
    process.exit(1)
  }
" "$backend_key" "$vendor_key" "$factory_ca" || exit 1
command -v npm >/dev/null || fail "npm is missing (it lists the production dependencies to copy)"

if $apt; then
  if [ ! -x /usr/sbin/nats-server ]; then
    say "installing nats-server with apt-get"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nats-server >/dev/null
  fi
  # Debian's package starts its own nats-server.service; hemd-bus.service is the device's.
  [ -x /usr/sbin/nats-server ] || fail "apt-get did not install /usr/sbin/nats-server"
elif [ ! -x /usr/sbin/nats-server ]; then
  say "warning: /usr/sbin/nats-server is missing (install it with: apt-get install nats-server)"
fi

if $user; then
  getent group hemd >/dev/null || { groupadd --system hemd && say "created group hemd"; }
  if ! id hemd >/dev/null 2>&1; then
    useradd --system --gid hemd --home-dir /var/lib/hemd --no-create-home --shell /usr/sbin/nologin hemd
    say "created user hemd (no login shell)"
  fi
  # hemd --split started as root runs each service as its own user, the gateway in no shared group
  # (deploy/LAYOUT.md, "Privilege separation"); the supervisor sets the data dir's owners at each start.
  getent group hemd-core >/dev/null || { groupadd --system hemd-core && say "created group hemd-core"; }
  for svc in eventstore system auth keystore logger storage upgrade gateway; do
    if ! id "hemd-$svc" >/dev/null 2>&1; then
      useradd --system --user-group --home-dir /nonexistent --no-create-home --shell /usr/sbin/nologin "hemd-$svc"
      say "created user hemd-$svc (no login shell)"
    fi
  done
fi

# The runtime: replaced whole, so that nothing of an older build stays behind.
say "installing the runtime into $prefix"
rm -rf "$prefix.new"
mkdir -p "$prefix.new"
cp -a "$src/dist" "$prefix.new/dist"
cp "$src/package.json" "$prefix.new/"
[ -f "$src/package-lock.json" ] && cp "$src/package-lock.json" "$prefix.new/"
mkdir -p "$prefix.new/deploy/systemd"
cp "$src/deploy/LAYOUT.md" "$prefix.new/deploy/"
# hem-cloud's, for a cloud host (docs/operations.md): its units, and the web authenticator page it serves.
cp "$src/deploy/systemd/hem-cloud.service" "$src/deploy/systemd/hem-cloud-nats.service" "$prefix.new/deploy/systemd/"
[ -d "$src/dist-authapp" ] && cp -a "$src/dist-authapp" "$prefix.new/dist-authapp"
# Only the production dependencies, as npm resolved them for this checkout (offline: no registry needed).
deps="$(cd "$src" && npm ls --omit=dev --parseable --all 2>/dev/null | sed -n "s#^$src/##p" | sort)" || true
[ -n "$deps" ] || fail "npm ls found no production dependencies in $src: run deploy/setup.sh first"
# A package nested inside one already listed comes along with it.
top="$(awk 'NR == 1 || index($0, last "/") != 1 { print; last = $0 }' <<<"$deps")"
(cd "$src" && tar -cf - $top) | tar -C "$prefix.new" -xf -
chmod -R u=rwX,go=rX "$prefix.new"
$owner && chown -R root:root "$prefix.new"
rm -rf "$prefix.old"
[ -d "$prefix" ] && mv "$prefix" "$prefix.old"
mv "$prefix.new" "$prefix"
rm -rf "$prefix.old"
# What the bootloader checks before it runs the build: the tree must match its signed manifest.
"$node" --input-type=module -e "
  const { loadFirmware } = await import('$prefix/dist/image/firmware-manifest.js')
  const { readTrustAnchor } = await import('$prefix/dist/hal/trust-anchors.js')
  const fw = await loadFirmware('$prefix/dist', await readTrustAnchor('vendorKey', process.argv[1]))
  console.log('install: firmware ' + fw.version + ' verifies against its signed manifest and the vendor key')
" "$vendor_key" || fail "the installed build does not verify against dist/firmware.json: rebuild with deploy/setup.sh"

say "installing the units into $units"
mkdir -p "$units"
install -m 0644 "$src/deploy/systemd/hemd-bus.service" "$src/deploy/systemd/hemd.service" "$units/"
# --split: the drop-ins that run the supervisor as root with the capabilities of privilege separation.
for unit in hemd hemd-bus; do
  if $split; then
    mkdir -p "$units/$unit.service.d"
    install -m 0644 "$src/deploy/systemd/$unit-split.conf" "$units/$unit.service.d/split.conf"
    say "installed $units/$unit.service.d/split.conf (--split)"
  elif [ -f "$units/$unit.service.d/split.conf" ]; then
    rm -f "$units/$unit.service.d/split.conf"
    rmdir --ignore-fail-on-non-empty "$units/$unit.service.d"
    say "removed $units/$unit.service.d/split.conf (no --split)"
  fi
done

mkdir -p "$etc"
chmod 0755 "$etc"
# Public keys: readable by all, written by root only. hemd.service names these paths.
mkdir -p "$keys"
chmod 0755 "$keys"
for pair in "$backend_key:backend.pub.pem" "$vendor_key:vendor.pub.pem" "$factory_ca:factory-ca.crt.pem"; do
  from="${pair%:*}"
  to="$keys/${pair##*:}"
  if [ "$from" != "$to" ]; then
    install -m 0644 "$from" "$to.new"
    mv "$to.new" "$to"
    say "installed $to"
  fi
  chmod 0644 "$to"
done
if [ -f "$etc/hemd.env" ]; then
  say "keeping $etc/hemd.env"
else
  umask 022
  cat >"$etc/hemd.env" <<EOF
# hemd's flags on this board, read by hemd.service and hemd-bus.service (deploy/LAYOUT.md).
# install.sh writes this file once and keeps it afterwards.

# The device's hardware variant, P or E: a data dir keeps the variant it was created with.
HEMD_VARIANT=$variant
# hemd's other flags (hemd --help): the HTTPS API for the network, plain HTTP on loopback only.
# An NBD export, if wanted: --nbd unix:/run/hemd/nbd.sock
HEMD_OPTS="--http 127.0.0.1:8080 --https 0.0.0.0:8443"
# hemd bus-config's flags (hemd bus-config --help): --listen 127.0.0.1:PORT, and the fleet backend (the leaf
# link, and hemd --bus mirrors the journal there): --backend nats://dev-DEVID:PASSWORD@HOST:7422 (its leaf-node
# port), --backend-domain NAME, --stream-generation N (docs/operations.md, "Fleet backend"). Not in HEMD_OPTS.
HEMD_BUS_OPTS=""
EOF
  # HEMD_BUS_OPTS may come to hold the backend leaf user's password: systemd (root) alone reads the file.
  chmod 0600 "$etc/hemd.env"
  say "wrote $etc/hemd.env (variant $variant)"
fi

# The data dir is the device: it is never replaced or emptied here.
if [ -d "$data" ]; then
  say "keeping the data dir $data"
else
  mkdir -p "$data"
  say "created the data dir $data"
fi
# Under --split a device's data dir is the supervisor's (root, 0711), its parts the service users':
# systemd and the supervisor set them at each start. A new one is hemd's: bus-config creates the device.
if ! $split || [ ! -f "$data/device.json" ]; then
  chmod 0700 "$data"
  $owner && $user && chown hemd:hemd "$data"
fi

if $systemctl; then
  systemctl daemon-reload
  systemctl enable hemd-bus.service hemd.service
  systemctl restart hemd.service
  say "hemd.service is $(systemctl is-active hemd.service); logs: journalctl -u hemd -u hemd-bus"
fi
say "done"
