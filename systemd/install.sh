#!/usr/bin/env bash
# Set dealerbox up as a service on a Raspberry Pi OS image (bookworm or later),
# upgrade it, or remove it. docs/INSTALL.md is the guide; --help lists the options.
#
# Safe to run again: every step checks before it changes anything, and a second
# run with the same arguments changes no file. Each version lives in a venv of its
# own (/opt/dealerbox/venvs/VERSION); /opt/dealerbox/.venv is a symlink to the one
# in use, switched only once the new version has passed check-config on the
# installed table config, so a failed upgrade leaves the old version running.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
UNIT=dealerbox.service
SERVICE_USER=dealerbox
DEVICE_GROUPS=(gpio spi i2c dialout)
# Debian's python, never whichever python3 comes first on PATH: a venv is only as
# runnable as the interpreter it links to (one under /root is not, for the service user).
PYTHON=${DEALERBOX_PYTHON:-/usr/bin/python3}

ROOT=/
DRY_RUN=0
START=0
EXTRAS=pi
TABLE=
WHEEL=
WHEELHOUSE=
MODE=install

usage() {
    cat <<'EOF'
Usage: install.sh [options]             install, or bring an install up to date
       install.sh --upgrade WHEEL       install a newer version, keep all state
       install.sh --uninstall [--purge] remove the service and the code

  -n, --dry-run      print what would be done, change nothing
  --table FILE       table config to install as /etc/dealerbox/table.toml
                     (default: firmware_config/tables/pi5-pepper.toml on a Pi 5,
                     pi4-rc522.toml otherwise); an existing one is never overwritten
  --wheel FILE       install this dealerbox wheel (default: the checkout this
                     script is in, or the newest dealerbox wheel of --wheelhouse)
  --upgrade FILE     like --wheel, on a box where dealerbox is installed; the
                     service is restarted on the new version
  --wheelhouse DIR   install with no package index, only from the wheels in DIR
                     (make wheelhouse); apt-get is not run
  --extras LIST      pip extras to install (default: pi; "" for none)
  --start            (re)start the service at the end
  --uninstall        stop and remove the service and the venvs; the config, the
                     journal and the deck registry are kept
  --purge            with --uninstall: remove those too, and the service user
  --root DIR         write every file under DIR instead of / (tests, images);
                     system commands (apt-get, systemctl, useradd...) still run:
                     put recorders first on PATH to keep them off the system
EOF
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
        --extras) EXTRAS=${2?--extras needs a list}; shift ;;
        --wheel) WHEEL=${2:?--wheel needs a file}; shift ;;
        --upgrade) WHEEL=${2:?--upgrade needs a wheel}; MODE=upgrade; shift ;;
        --wheelhouse) WHEELHOUSE=${2:?--wheelhouse needs a directory}; shift ;;
        --uninstall) MODE=uninstall ;;
        --purge) PURGE=1 ;;
        --root) ROOT=${2:?--root needs a directory}; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
    shift
done
PURGE=${PURGE:-0}
((PURGE)) && [[ $MODE != uninstall ]] && die "--purge goes with --uninstall"

resolve_root
if [[ -z $R ]] && ((!DRY_RUN)) && ((EUID != 0)); then
    die "run as root (sudo), or use --dry-run or --root DIR"
fi
announce_run

PREFIX=$R/opt/dealerbox
VENVS=$PREFIX/venvs
CURRENT=$PREFIX/.venv          # symlink to venvs/VERSION; the unit runs CURRENT/bin/dealerbox
CONF_DIR=$R/etc/dealerbox
STATE_DIR=$R/var/lib/dealerbox
UNIT_DIR=$R/etc/systemd/system
MODULES_LOAD=$R/etc/modules-load.d/dealerbox.conf
MODEL_FILE=${DEALERBOX_MODEL_FILE:-$R/proc/device-tree/model}
BOOT_CONFIG=${DEALERBOX_BOOT_CONFIG:-}

# install-floor.sh puts a floor server in the same /opt/dealerbox and /etc/dealerbox:
# a table here would silently run the floor's venv (or remove it, uninstalling).
if [[ -e $CONF_DIR/floor.toml ]]; then
    die "this machine is a floor server ($CONF_DIR/floor.toml, from install-floor.sh): a table and a" \
        "floor server share /opt/dealerbox and /etc/dealerbox, so a table needs a machine of its own"
fi

if [[ $MODE == uninstall ]]; then
    say "uninstall"
    if [[ -f $UNIT_DIR/$UNIT ]]; then
        run systemctl disable --now "$UNIT"
        run rm -f "$UNIT_DIR/$UNIT"
        run systemctl daemon-reload
    else
        say "no $UNIT_DIR/$UNIT"
    fi
    if [[ -e $PREFIX ]]; then run rm -rf "$PREFIX"; else say "no $PREFIX"; fi
    if ((PURGE)); then
        for dir in "$CONF_DIR" "$STATE_DIR"; do
            if [[ -e $dir ]]; then run rm -rf "$dir"; else say "no $dir"; fi
        done
        if getent passwd "$SERVICE_USER" >/dev/null; then run userdel "$SERVICE_USER"; fi
        [[ -f $MODULES_LOAD ]] && run rm -f "$MODULES_LOAD"
    else
        say "kept: $CONF_DIR (the table config), $STATE_DIR (journal, deck registry); --purge removes them"
    fi
    say "the SPI/I2C/UART lines in config.txt are left as they are"
    exit 0
fi

# -- what to install -----------------------------------------------------------------
choose_source
INSTALLED=$(current_version)
if [[ $MODE == upgrade && -z $INSTALLED ]]; then
    die "--upgrade: dealerbox is not installed under $PREFIX (install it first)"
fi
say "dealerbox $VERSION from $SOURCE${INSTALLED:+ (installed: $INSTALLED)}"

REBOOT_NEEDED=0
MODEL=
[[ -r $MODEL_FILE ]] && MODEL=$(tr -d '\0' <"$MODEL_FILE")
case $MODEL in
    *"Raspberry Pi 5"*) BOARD=pi5 ;;
    *"Raspberry Pi"*) BOARD=pi4 ;;
    *) BOARD=unknown ;;
esac
say "board: ${MODEL:-unknown} ($BOARD)"

if [[ -z $TABLE ]]; then
    if [[ $BOARD == pi5 ]]; then TABLE=$REPO/firmware_config/tables/pi5-pepper.toml
    else TABLE=$REPO/firmware_config/tables/pi4-rc522.toml; fi
fi
if [[ ! -f $TABLE ]] && [[ ! -e $CONF_DIR/table.toml ]]; then
    ((DRY_RUN)) || die "no table config at $TABLE (use --table FILE)"
    say "warning: no table config at $TABLE (use --table FILE)"
fi

# -- the system ------------------------------------------------------------------------
if [[ -n $WHEELHOUSE ]]; then
    say "offline (--wheelhouse): no apt-get; python3-venv must be installed"
else
    say "system packages"
    run apt-get update
    run apt-get install -y --no-install-recommends python3-venv python3-dev gcc
fi

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
if getent passwd "$SERVICE_USER" >/dev/null; then
    run usermod --append --groups "$group_list" "$SERVICE_USER"
else
    run useradd --system --user-group --home-dir /var/lib/dealerbox --no-create-home \
        --shell /usr/sbin/nologin --groups "$group_list" "$SERVICE_USER"
fi

if [[ $BOARD == unknown ]]; then
    say "not a Raspberry Pi this script knows (no model in $MODEL_FILE): config.txt left alone;"
    say "enable SPI, I2C and the UART your wiring needs yourself (docs/INSTALL.md)"
else
    say "enable SPI and I2C"
    if [[ -z $BOOT_CONFIG ]]; then
        if [[ -f $R/boot/firmware/config.txt ]]; then BOOT_CONFIG=$R/boot/firmware/config.txt
        elif [[ -f $R/boot/config.txt ]]; then BOOT_CONFIG=$R/boot/config.txt
        else BOOT_CONFIG=$R/boot/firmware/config.txt; fi
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
        ((DRY_RUN)) || mkdir -p "$(dirname "$MODULES_LOAD")"
        ensure_line "i2c-dev" "$MODULES_LOAD"
    fi
    if [[ $BOARD == pi5 ]]; then
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
fi

# -- the table config: never overwritten -----------------------------------------------
say "configuration in $CONF_DIR"
if [[ -e $CONF_DIR/table.toml ]]; then
    say "$CONF_DIR/table.toml exists: kept as it is"
else
    run install -D -m 0644 "$TABLE" "$CONF_DIR/table.toml"
fi
[[ -d $STATE_DIR ]] || run install -d -m 0750 "$STATE_DIR"
# A table that reports to the floor needs paho-mqtt, the mqtt extra (check-config refuses it without).
FLOOR_ON=0
FLOOR_CONFIG=$CONF_DIR/table.toml; [[ -f $FLOOR_CONFIG ]] || FLOOR_CONFIG=$TABLE
# (Read with awk, not TOML: a form it misses is refused by check-config, saying what to install.)
if [[ -f $FLOOR_CONFIG ]] && awk '/^[ \t]*\[/ { on = ($0 ~ /^[ \t]*\[[ \t]*floor[ \t]*\][ \t]*(#.*)?$/) }
    on && /^[ \t]*enabled[ \t]*=[ \t]*true[ \t]*(#.*)?$/ { found = 1 } END { exit !found }' "$FLOOR_CONFIG"; then
    FLOOR_ON=1
    [[ ,$EXTRAS, == *,mqtt,* ]] || EXTRAS=${EXTRAS:+$EXTRAS,}mqtt
    say "[floor] is enabled in $FLOOR_CONFIG: with the mqtt extra"
fi

# -- the code: a venv per version, switched by a symlink --------------------------------
CODE_CHANGED=0
if [[ $INSTALLED == "$VERSION" ]]; then
    say "dealerbox $VERSION is installed in $CURRENT: kept"
    if ((FLOOR_ON)) && ! "$CURRENT/bin/python" -I -c 'import paho.mqtt' 2>/dev/null; then
        pip_install "$CURRENT/bin/python" "$(with_extras "$SOURCE" mqtt)"
    fi
else
    make_venv
    if [[ $BOARD == pi5 && ,$EXTRAS, == *,pi,* ]]; then
        # RPi.GPIO cannot drive a Pi 5; rpi-lgpio is its drop-in replacement and
        # the two must not be installed together (same module name).
        run "$NEW/bin/python" -m pip uninstall --quiet --yes RPi.GPIO
        pip_install "$NEW/bin/python" "$(with_extras "$SOURCE" lgpio)"
    fi
    say "check-config of $CONF_DIR/table.toml with dealerbox $VERSION"
    if ! run "$NEW/bin/dealerbox" check-config --fresh-install "$CONF_DIR/table.toml"; then
        run rm -rf "$NEW"
        if [[ -n $INSTALLED ]]; then
            die "dealerbox $VERSION refuses $CONF_DIR/table.toml (above): dealerbox $INSTALLED stays in use"
        fi
        die "dealerbox $VERSION refuses $CONF_DIR/table.toml (above): fix it and run install.sh again"
    fi
    switch_venv
    CODE_CHANGED=1
fi
install_docs

# -- the unit ----------------------------------------------------------------------------
say "systemd unit $UNIT"
UNIT_EXISTED=0
[[ -f $UNIT_DIR/$UNIT ]] && UNIT_EXISTED=1
if install_file "$REPO/systemd/$UNIT" "$UNIT_DIR/$UNIT" 0644; then
    run systemctl daemon-reload
fi
run systemctl enable "$UNIT"

if ((START)) || { ((CODE_CHANGED)) && ((UNIT_EXISTED)); }; then
    say "restarting $UNIT on dealerbox $VERSION"
    run systemctl restart "$UNIT"
elif ((REBOOT_NEEDED)); then
    say "reboot to apply the boot config; $UNIT starts at boot"
else
    say "done; $UNIT starts at boot (or now: systemctl start $UNIT)"
fi
# The deck step names the installed table's own reader (c1 on a Pi 5, board on a Pi 4).
if [[ -x $CURRENT/bin/dealerbox ]] &&
    DECK_READER=$("$CURRENT/bin/dealerbox" check-config --deck-reader "$CONF_DIR/table.toml"); then
    say "decks are registered on reader $DECK_READER, the first one with:"
    say "  sudo ${CURRENT#"$R"}/bin/dealerbox deck register --reader $DECK_READER --deck A"
else
    say "then register a deck on the board's reader (dealerbox check-config --deck-reader names it)"
fi
