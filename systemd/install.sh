#!/usr/bin/env bash
# Set dealerbox up as a service on a Raspberry Pi OS image (bookworm or later).
#
#   sudo systemd/install.sh [--dry-run] [--table FILE] [--extras LIST] [--start]
#
# Safe to run again: every step checks before it changes anything. With
# --dry-run it changes nothing and prints each command it would run, prefixed
# with "+ " (it still reads the system to decide, e.g. whether the user exists).
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
PREFIX=/opt/dealerbox
VENV=$PREFIX/.venv
CONF_DIR=/etc/dealerbox
STATE_DIR=/var/lib/dealerbox
UNIT_DIR=/etc/systemd/system
UNIT=dealerbox.service
SERVICE_USER=dealerbox
DEVICE_GROUPS=(gpio spi i2c dialout)
MODEL_FILE=${DEALERBOX_MODEL_FILE:-/proc/device-tree/model}
BOOT_CONFIG=${DEALERBOX_BOOT_CONFIG:-}

DRY_RUN=0
START=0
EXTRAS=pi
TABLE=

usage() {
    cat <<'EOF'
Usage: install.sh [--dry-run] [--table FILE] [--extras LIST] [--start]

  -n, --dry-run   print what would be done, change nothing
  --table FILE    table config to install as /etc/dealerbox/table.toml
                  (default: firmware_config/tables/pi5-pepper.toml on a Pi 5,
                  firmware_config/tables/pi4-rc522.toml otherwise); an existing
                  /etc/dealerbox/table.toml is never overwritten
  --extras LIST   pip extras to install (default: pi)
  --start         (re)start the service at the end instead of waiting for a reboot
EOF
}

die() { printf 'install.sh: %s\n' "$*" >&2; exit 1; }
say() { printf '==> %s\n' "$*"; }

# Run a command, or only show it with --dry-run.
run() {
    if ((DRY_RUN)); then
        local arg
        printf '+'
        for arg in "$@"; do
            # Quote only what a shell would misread, so the log stays legible.
            if [[ $arg =~ ^[A-Za-z0-9_./:=,@%+-]+$ ]]; then printf ' %s' "$arg"
            else printf ' %q' "$arg"; fi
        done
        printf '\n'
    else
        "$@"
    fi
}

# Append LINE to FILE unless FILE already has exactly that line.
ensure_line() {
    local line=$1 file=$2
    if [[ -f $file ]] && grep -qxF -- "$line" "$file"; then
        say "$file already has: $line"
    elif ((DRY_RUN)); then
        printf '+ echo %q >> %q\n' "$line" "$file"
    else
        printf '%s\n' "$line" >>"$file"
        REBOOT_NEEDED=1
    fi
}

while (($#)); do
    case $1 in
        -n | --dry-run) DRY_RUN=1 ;;
        --start) START=1 ;;
        --table) TABLE=${2:?--table needs a file}; shift ;;
        --extras) EXTRAS=${2:?--extras needs a list}; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
    shift
done

if ((!DRY_RUN)) && ((EUID != 0)); then
    die "run as root (sudo), or use --dry-run"
fi
((DRY_RUN)) && say "dry run: nothing will be changed"

REBOOT_NEEDED=0
MODEL=
[[ -r $MODEL_FILE ]] && MODEL=$(tr -d '\0' <"$MODEL_FILE")
PI5=0
[[ $MODEL == *"Raspberry Pi 5"* ]] && PI5=1
say "board: ${MODEL:-unknown (not a Raspberry Pi?)}"

if [[ -z $TABLE ]]; then
    if ((PI5)); then TABLE=$REPO/firmware_config/tables/pi5-pepper.toml
    else TABLE=$REPO/firmware_config/tables/pi4-rc522.toml; fi
fi
if [[ ! -f $TABLE ]]; then
    ((DRY_RUN)) || die "no table config at $TABLE (use --table FILE)"
    say "warning: no table config at $TABLE (use --table FILE)"
fi

say "system packages"
run apt-get update
run apt-get install -y --no-install-recommends python3-venv python3-dev gcc

say "groups: ${DEVICE_GROUPS[*]}"
for group in "${DEVICE_GROUPS[@]}"; do
    if getent group "$group" >/dev/null; then
        say "group $group exists"
    else
        run groupadd --system "$group"
    fi
done

group_list=$(IFS=,; printf '%s' "${DEVICE_GROUPS[*]}")
say "user $SERVICE_USER in groups $group_list"
if id -u "$SERVICE_USER" >/dev/null 2>&1; then
    run usermod --append --groups "$group_list" "$SERVICE_USER"
else
    run useradd --system --user-group --home-dir "$STATE_DIR" --no-create-home \
        --shell /usr/sbin/nologin --groups "$group_list" "$SERVICE_USER"
fi

say "enable SPI and I2C"
if [[ -z $BOOT_CONFIG ]]; then
    if [[ -f /boot/firmware/config.txt ]]; then BOOT_CONFIG=/boot/firmware/config.txt
    elif [[ -f /boot/config.txt ]]; then BOOT_CONFIG=/boot/config.txt
    else BOOT_CONFIG=/boot/firmware/config.txt; fi
fi
if [[ ! -f $BOOT_CONFIG ]] && ((!DRY_RUN)); then
    die "no $BOOT_CONFIG: this is not a Raspberry Pi OS image"
fi
if command -v raspi-config >/dev/null; then
    # raspi-config also loads i2c-dev at boot and now; 0 means "enable".
    run raspi-config nonint do_spi 0
    run raspi-config nonint do_i2c 0
else
    ensure_line "dtparam=spi=on" "$BOOT_CONFIG"
    ensure_line "dtparam=i2c_arm=on" "$BOOT_CONFIG"
    ensure_line "i2c-dev" /etc/modules-load.d/dealerbox.conf
fi
if ((PI5)); then
    # The Pepper C1 sits on UART0 (GPIO 14/15, /dev/ttyAMA0); on a Pi 5 serial0 is
    # the debug connector, so UART0 must be switched on by name.
    ensure_line "dtparam=uart0=on" "$BOOT_CONFIG"
    ensure_line "enable_uart=1" "$BOOT_CONFIG"
else
    # The board RC522 sits on SPI1 (spidev1.0): raspi-config only enables SPI0.
    ensure_line "dtoverlay=spi1-1cs" "$BOOT_CONFIG"
    # One chip select on SPI0 frees BCM 7 for the FLOOR button, and the UART
    # off frees BCM 14/15 for two more buttons (pi4-rc522.toml's pin table).
    ensure_line "dtoverlay=spi0-1cs" "$BOOT_CONFIG"
    ensure_line "enable_uart=0" "$BOOT_CONFIG"
fi

say "virtual environment in $VENV with extras [$EXTRAS]"
run install -d -m 0755 "$PREFIX"
if [[ -x $VENV/bin/python ]]; then
    say "$VENV exists"
else
    run python3 -m venv "$VENV"
fi
run "$VENV/bin/python" -m pip install --quiet --upgrade pip
run "$VENV/bin/python" -m pip install --quiet "${REPO}[$EXTRAS]"
if ((PI5)); then
    # RPi.GPIO cannot drive a Pi 5; rpi-lgpio is its drop-in replacement and
    # the two must not be installed together (same module name).
    run "$VENV/bin/python" -m pip uninstall --quiet --yes RPi.GPIO
    run "$VENV/bin/python" -m pip install --quiet "${REPO}[lgpio]"
fi
run install -m 0644 "$REPO/README.md" "$PREFIX/README.md"

say "configuration in $CONF_DIR"
run install -d -m 0755 "$CONF_DIR"
if [[ -e $CONF_DIR/table.toml ]]; then
    say "$CONF_DIR/table.toml exists: kept as it is"
else
    run install -m 0644 "$TABLE" "$CONF_DIR/table.toml"
fi
run "$VENV/bin/dealerbox" check-config "$CONF_DIR/table.toml"

say "systemd unit $UNIT"
run install -m 0644 "$REPO/systemd/$UNIT" "$UNIT_DIR/$UNIT"
run systemctl daemon-reload
run systemctl enable "$UNIT"

if ((START)); then
    run systemctl restart "$UNIT"
elif ((REBOOT_NEEDED)); then
    say "reboot to apply the boot config; $UNIT starts at boot"
else
    say "done; $UNIT starts at boot (or: systemctl start $UNIT)"
fi
