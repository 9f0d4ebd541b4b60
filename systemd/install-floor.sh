#!/usr/bin/env bash
# Set up the floor server on Debian (bookworm or later): mosquitto with the
# floor's conf.d snippet, the casino CA, the collector and the web view as
# services. docs/floor/install.md is the guide; --help lists the options.
#
# Safe to run again: every step checks before it changes anything, a second run
# with the same arguments changes no file, and the CA, the certificates and
# floor.toml are never overwritten. Each dealerbox version lives in a venv of its
# own (/opt/dealerbox/venvs/VERSION); /opt/dealerbox/.venv is a symlink to the
# one in use, switched only once the new version has read floor.toml.
set -euo pipefail
umask 022

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib.sh
. "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")/lib.sh"
# Every file install_file copies is root's unless the call names another owner.
FILE_OWNER=root:root
FLOOR_FILES=$REPO/firmware_config/floor
SERVICE_USER=dealerbox-floor
BROKER_USER=mosquitto
UNITS=(dealerbox-floor.service dealerbox-floor-web.service)
COLLECTOR_UNIT=dealerbox-floor-collector@.service
BROKER_CHECK_UNITS=(dealerbox-broker-check.service dealerbox-broker-check.timer)
# A drop-in for Debian's mosquitto.service: SIGKILL 10 s after a SIGTERM it ignores.
BROKER_DROPIN=mosquitto.service.d/dealerbox.conf
# Debian's python, never whichever python3 comes first on PATH: a venv is only as
# runnable as the interpreter it links to (one under /root is not, for the service user).
PYTHON=${DEALERBOX_PYTHON:-/usr/bin/python3}

ROOT=/
DRY_RUN=0
START=0
EXTRAS=floor
WHEEL=
WHEELHOUSE=
BROKER_NAME=
WEB_NAME=
WEB_IPS=()
BROKER_IPS=()
COLLECTORS=()
COLLECTORS_ONLY=0

usage() {
    cat <<'EOF'
Usage: install-floor.sh --broker-name NAME [options]   the first time
       install-floor.sh [options]                       again, or to upgrade

  --broker-name NAME the DNS name the tables reach this server by: the broker's
                     certificate names it, and 127.0.0.1 for the collector
                     (needed while there is no broker certificate yet)
  --broker-ip IP     an address the tables may use instead of the name (repeat it)
  -n, --dry-run      print what would be done, change nothing
  --wheel FILE       install this dealerbox wheel (default: the checkout this
                     script is in, or the newest dealerbox wheel of --wheelhouse)
  --wheelhouse DIR   install with no package index, only from the wheels in DIR;
                     apt-get is not run (mosquitto and openssl must be installed)
  --extras LIST      pip extras to install (default: floor)
  --python FILE      the interpreter the venv is made with (default: Debian's
                     /usr/bin/python3, or $DEALERBOX_PYTHON); the service user
                     must be able to run it
  --collector NAME   one more collector on this machine (repeat it): its
                     certificate NAME (floor-collector-2 to floor-collector-9:
                     the shipped ACL has their blocks), /etc/dealerbox/NAME.toml and
                     the unit dealerbox-floor-collector@NAME.service
  --collectors-only  a machine that runs collectors only (--collector NAME each),
                     for a broker and a CA elsewhere: no mosquitto, no CA here;
                     /etc/dealerbox/floor.toml, floor/ca.crt and each NAME's
                     certificate and key copied from the CA's machine first
                     (docs/floor/group.md, "Several collectors")
  --web-name NAME    the web view's TLS certificate naming NAME (and every
                     --web-ip), floor-web.crt and floor-web.key in
                     /etc/dealerbox/floor/, readable by the view; made once
  --web-ip IP        an address the browsers may use instead of --web-name
  --start            (re)start mosquitto, the collector and the web view at the end
  --root DIR         write every file under DIR instead of / (tests, images);
                     system commands (apt-get, systemctl, useradd...) still run:
                     put recorders first on PATH to keep them off the system

The CA and its certificates are in /etc/mosquitto/dealerbox (make a table's with
dealerbox-floor-ca client T07); the collector's in /etc/dealerbox/floor. The floor's
commands run as its service user through dealerbox-floor (dealerbox-floor user list:
dealerbox floor user list as dealerbox-floor, from a root shell or with sudo).

The table's installer (install.sh) and this one share /opt/dealerbox and
/etc/dealerbox: one machine is a table or a floor server, never both; each refuses
a machine the other set up.
EOF
}

# Give PATH the owner OWNER:GROUP and MODE (octal, e.g. 0640) unless it has them.
ensure_mode() {
    local path=$1 owner=$2 mode=$3
    if [[ ! -e $path ]]; then
        ((DRY_RUN)) && return 0
        die "no $path"
    fi
    [[ $(stat -c '%U:%G %a' "$path") == "$owner ${mode#0}" ]] && return 0
    run chown "$owner" "$path"
    run chmod "$mode" "$path"
}

# A directory with its owner and mode, made if missing.
ensure_dir() {
    local path=$1 owner=$2 mode=$3
    if [[ -d $path ]]; then
        ensure_mode "$path" "$owner" "$mode"
    else
        run install -d -o "${owner%%:*}" -g "${owner##*:}" -m "$mode" "$path"
    fi
}

while (($#)); do
    case $1 in
        -n | --dry-run) DRY_RUN=1 ;;
        --start) START=1 ;;
        --broker-name) BROKER_NAME=${2:?--broker-name needs a name}; shift ;;
        --broker-ip) BROKER_IPS+=("${2:?--broker-ip needs an address}"); shift ;;
        --extras) EXTRAS=${2?--extras needs a list}; shift ;;
        --python) PYTHON=${2:?--python needs an interpreter}; shift ;;
        --collectors-only) COLLECTORS_ONLY=1 ;;
        --collector) COLLECTORS+=("${2:?--collector needs a name}"); shift ;;
        --web-name) WEB_NAME=${2:?--web-name needs a name}; shift ;;
        --web-ip) WEB_IPS+=("${2:?--web-ip needs an address}"); shift ;;
        --wheel) WHEEL=${2:?--wheel needs a file}; shift ;;
        --wheelhouse) WHEELHOUSE=${2:?--wheelhouse needs a directory}; shift ;;
        --root) ROOT=${2:?--root needs a directory}; shift ;;
        -h | --help) usage; exit 0 ;;
        *) usage >&2; die "unknown argument: $1" ;;
    esac
    shift
done

resolve_root
if ((!DRY_RUN)) && ((EUID != 0)); then
    die "run as root (sudo): the keys belong to root and the groups $BROKER_USER and $SERVICE_USER; or use --dry-run"
fi
[[ $PYTHON == /* ]] || die "--python $PYTHON: name the interpreter by its absolute path (Debian's is /usr/bin/python3)"
if [[ ! -x $PYTHON ]]; then
    ((DRY_RUN)) || die "no interpreter at $PYTHON (Debian package python3; or name one with --python FILE)"
fi
if ((COLLECTORS_ONLY)) && ((${#COLLECTORS[@]} == 0)); then
    die "--collectors-only needs the collectors to run here: --collector NAME for each"
fi
# A collector reads the tables only under a name the broker's ACL has a block for.
ACL_COLLECTORS=$(sed -n 's/^user \(floor-collector-[A-Za-z0-9_.-]*\)$/\1/p' "$FLOOR_FILES/acl" | tr '\n' ' ')
for name in "${COLLECTORS[@]}"; do
    [[ " $ACL_COLLECTORS" == *" $name "* ]] \
        || die "--collector $name: the broker's ACL ($FLOOR_FILES/acl) reads the tables for ${ACL_COLLECTORS% } only"
done
announce_run

PREFIX=$R/opt/dealerbox
VENVS=$PREFIX/venvs
CURRENT=$PREFIX/.venv
CA_DIR=$R/etc/mosquitto/dealerbox
SNIPPET=$R/etc/mosquitto/conf.d/dealerbox.conf
BROKER_STATE=$R/var/lib/mosquitto
DYNSEC_FILE=$BROKER_STATE/dealerbox-dynsec.json
CONF_DIR=$R/etc/dealerbox
IDENTITY_DIR=$CONF_DIR/floor
UNIT_DIR=$R/etc/systemd/system
CA_TOOL=$R/usr/local/sbin/dealerbox-floor-ca
FLOOR_TOOL=$R/usr/local/bin/dealerbox-floor
MAKE_CA=$PREFIX/floor/make-ca.sh
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

# -- one machine, one role -------------------------------------------------------------
# install.sh puts a table in the same /opt/dealerbox and /etc/dealerbox: one would
# silently run the other's venv, without its extras.
if [[ -e $CONF_DIR/table.toml ]]; then
    die "this machine is a table ($CONF_DIR/table.toml, from install.sh): a table and a floor server" \
        "share /opt/dealerbox and /etc/dealerbox, so the floor needs a machine of its own" \
        "(or remove the table first: install.sh --uninstall --purge)"
fi

# -- what to install -----------------------------------------------------------------
choose_source
INSTALLED=$(current_version)
say "dealerbox $VERSION from $SOURCE${INSTALLED:+ (installed: $INSTALLED)}"

# -- the system ----------------------------------------------------------------------
if [[ -n $WHEELHOUSE ]]; then
    say "offline (--wheelhouse): no apt-get; mosquitto, openssl, python3-venv and fonts-dejavu-core must be installed"
else
    say "system packages"
    run apt-get update
    if ((COLLECTORS_ONLY)); then
        run apt-get install -y --no-install-recommends python3-venv fonts-dejavu-core
    else
        run apt-get install -y --no-install-recommends mosquitto openssl python3-venv fonts-dejavu-core
    fi
fi
if ((!COLLECTORS_ONLY)); then
if ((!DRY_RUN)); then
    for tool in mosquitto mosquitto_ctrl openssl; do
        command -v "$tool" >/dev/null || [[ -x /usr/sbin/$tool ]] \
            || die "$tool is not installed (Debian packages mosquitto, openssl)"
    done
fi
# Debian puts the plugin under /usr/lib/<multiarch>/: the snippet names it for this machine.
DYNSEC_PLUGIN=$(compgen -G '/usr/lib/*/mosquitto_dynamic_security.so' | head -n 1 || true)
if [[ -z $DYNSEC_PLUGIN ]]; then
    ((DRY_RUN)) || die "mosquitto's dynamic security plugin is missing (/usr/lib/*/mosquitto_dynamic_security.so, Debian package mosquitto 2.0 or later)"
    DYNSEC_PLUGIN=/usr/lib/MULTIARCH/mosquitto_dynamic_security.so
fi
MULTIARCH=$(basename "$(dirname "$DYNSEC_PLUGIN")")

if ! getent group "$BROKER_USER" >/dev/null; then
    ((DRY_RUN)) || die "no group $BROKER_USER: the mosquitto package makes it (apt-get install mosquitto)"
    say "no group $BROKER_USER yet (the mosquitto package makes it)"
fi
fi  # the broker's packages, not on a machine of collectors only
say "service user $SERVICE_USER"
if getent passwd "$SERVICE_USER" >/dev/null; then
    say "user $SERVICE_USER exists"
else
    run useradd --system --user-group --home-dir /var/lib/dealerbox-floor --no-create-home \
        --shell /usr/sbin/nologin "$SERVICE_USER"
fi

# The floor's commands as docs/floor/ writes them (dealerbox-floor user list), run as the
# service user so the store stays its own: from a root shell (runuser) or with sudo.
cat >"$SCRATCH/dealerbox-floor" <<'EOF'
#!/bin/sh
# dealerbox floor ARGS as the user dealerbox-floor (written by install-floor.sh).
dealerbox=/opt/dealerbox/.venv/bin/dealerbox
case $(id -un) in
    root) exec runuser -u dealerbox-floor -- "$dealerbox" floor "$@" ;;
    dealerbox-floor) exec "$dealerbox" floor "$@" ;;
    *) echo "dealerbox-floor: run it as root (a root shell, or sudo dealerbox-floor ...)" >&2; exit 1 ;;
esac
EOF
install_file "$SCRATCH/dealerbox-floor" "$FLOOR_TOOL" 0755 || true

# -- the CA and the broker's files -----------------------------------------------------
ACL_CHANGED=0
SNIPPET_CHANGED=0
BROKER_KEY_NEW=0
if ((COLLECTORS_ONLY)); then
    say "--collectors-only: no CA and no broker on this machine"
else
# One directory: the CA (ca.key, the index, every certificate issued, the tables' keys
# until they are copied to the tables) and what the broker reads. mosquitto starts as
# root and reads its files after dropping to the user mosquitto: the directory and
# broker.key are the group mosquitto's; every other key is root's alone.
say "the CA and the broker's certificate in $CA_DIR"
install_file "$FLOOR_FILES/make-ca.sh" "$MAKE_CA" 0755 || true
cat >"$SCRATCH/dealerbox-floor-ca" <<'EOF'
#!/bin/sh
# The floor's CA (written by install-floor.sh): make-ca.sh on /etc/mosquitto/dealerbox.
exec /opt/dealerbox/floor/make-ca.sh /etc/mosquitto/dealerbox "$@"
EOF
install_file "$SCRATCH/dealerbox-floor-ca" "$CA_TOOL" 0755 || true
make_ca() { run sh "$FLOOR_FILES/make-ca.sh" "$CA_DIR" "$@"; }

ensure_dir "$CA_DIR" "root:$BROKER_USER" 0750
[[ -f $CA_DIR/ca.key ]] || make_ca init
if [[ -f $CA_DIR/broker.crt ]]; then
    [[ -n $BROKER_NAME ]] && say "$CA_DIR/broker.crt exists: kept (docs/floor/security.md says how to reissue it)"
else
    [[ -n $BROKER_NAME ]] || die "--broker-name NAME: the name the tables reach this server by (there is no broker certificate yet)"
    make_ca broker "$BROKER_NAME" 127.0.0.1 "${BROKER_IPS[@]}"
    BROKER_KEY_NEW=1
fi
for role in floor-collector floor-admin "${COLLECTORS[@]}"; do
    [[ -f $CA_DIR/$role.crt ]] || make_ca client "$role"
done
if [[ -n $WEB_NAME && ! -f $CA_DIR/floor-web.crt ]]; then
    make_ca web "$WEB_NAME" "${WEB_IPS[@]}"
elif [[ -n $WEB_NAME ]]; then
    say "$CA_DIR/floor-web.crt exists: kept"
fi
ensure_mode "$CA_DIR/broker.key" "root:$BROKER_USER" 0640
for public in ca.crt broker.crt ca.crl; do
    ensure_mode "$CA_DIR/$public" root:root 0644
done
for key in ca.key floor-collector.key floor-admin.key "${COLLECTORS[@]/%/.key}"; do
    ensure_mode "$CA_DIR/$key" root:root 0600
done
if [[ -f $CA_DIR/floor-web.key ]]; then ensure_mode "$CA_DIR/floor-web.key" root:root 0600; fi
if [[ -f $CA_DIR/broker.crt ]] &&
    ! openssl x509 -in "$CA_DIR/broker.crt" -noout -ext subjectAltName 2>/dev/null | grep -q 'IP Address:127\.0\.0\.1'; then
    say "warning: $CA_DIR/broker.crt does not name 127.0.0.1, where the collector connects (floor.toml [broker] host)"
fi
install_file "$FLOOR_FILES/acl" "$CA_DIR/acl" 0644 && ACL_CHANGED=1

say "mosquitto: $SNIPPET (Debian's mosquitto.conf includes conf.d/)"
sed "s|@MULTIARCH@|$MULTIARCH|" "$FLOOR_FILES/mosquitto.conf" >"$SCRATCH/dealerbox.conf"
install_file "$SCRATCH/dealerbox.conf" "$SNIPPET" 0644 && SNIPPET_CHANGED=1
# The dynamic security plugin rewrites its file: it is the broker's, made once.
# (/var/lib/mosquitto is the package's; made here only in a fresh --root.)
[[ -d $BROKER_STATE ]] || run install -d -o "$BROKER_USER" -g root -m 0755 "$BROKER_STATE"
if [[ -f $DYNSEC_FILE ]]; then
    say "$DYNSEC_FILE exists: kept"
else
    run install -o "$BROKER_USER" -g "$BROKER_USER" -m 0600 "$FLOOR_FILES/dynamic-security.json" "$DYNSEC_FILE"
fi
fi  # the CA and the broker, not on a machine of collectors only

# -- the collector's identity and floor.toml ------------------------------------------
say "the collector's certificate in $IDENTITY_DIR, its config in $CONF_DIR/floor.toml"
[[ -d $CONF_DIR ]] || run install -d -m 0755 "$CONF_DIR"
ensure_dir "$IDENTITY_DIR" "root:$SERVICE_USER" 0750
# The store's folder, as the units' StateDirectory= makes it: made here too, so that
# dealerbox-floor user add works before any unit has started (an install without --start).
ensure_dir "$R/var/lib/dealerbox-floor" "$SERVICE_USER:$SERVICE_USER" 0750
# Each key the service user reads is root:dealerbox-floor 0640 here: the collectors'
# and the web view's (the CA's directory is the group mosquitto's, closed to them).
IDENTITIES=(floor-collector "${COLLECTORS[@]}")
if [[ -f $CA_DIR/floor-web.crt || -n $WEB_NAME ]]; then IDENTITIES+=(floor-web); fi
if ((COLLECTORS_ONLY)); then
    # Copied from the CA's machine: this one has no CA to issue them.
    IDENTITIES=("${COLLECTORS[@]}")
    needed=("$CONF_DIR/floor.toml" "$IDENTITY_DIR/ca.crt")
    for name in "${COLLECTORS[@]}"; do needed+=("$IDENTITY_DIR/$name.crt" "$IDENTITY_DIR/$name.key"); done
    for file in "${needed[@]}"; do
        [[ -f $file ]] || ((DRY_RUN)) ||
            die "--collectors-only: no $file: copy floor.toml, floor/ca.crt and each collector's .crt and .key" \
                "from the CA's machine first (docs/floor/group.md, Several collectors)"
    done
elif [[ -f $CA_DIR/ca.key ]] || ((!DRY_RUN)); then
    install_file "$CA_DIR/ca.crt" "$IDENTITY_DIR/ca.crt" 0644 || true
    for name in "${IDENTITIES[@]}"; do
        install_file "$CA_DIR/$name.crt" "$IDENTITY_DIR/$name.crt" 0644 || true
        install_file "$CA_DIR/$name.key" "$IDENTITY_DIR/$name.key" 0640 "root:$SERVICE_USER" || true
    done
fi
for name in "${IDENTITIES[@]}"; do
    ensure_mode "$IDENTITY_DIR/$name.key" "root:$SERVICE_USER" 0640
done
[[ ! -f $IDENTITY_DIR/ca.crt ]] || ensure_mode "$IDENTITY_DIR/ca.crt" root:root 0644
if [[ -e $CONF_DIR/floor.toml ]]; then
    say "$CONF_DIR/floor.toml exists: kept as it is"
else
    run install -m 0644 "$FLOOR_FILES/floor.toml" "$CONF_DIR/floor.toml"
fi
# Another collector's config: floor.toml as it is now (its store, its broker) with the
# collector's own certificate; made once, never overwritten (edit it beside floor.toml).
for name in "${COLLECTORS[@]}"; do
    if [[ -e $CONF_DIR/$name.toml ]]; then
        say "$CONF_DIR/$name.toml exists: kept as it is"
        continue
    fi
    if [[ ! -f $CONF_DIR/floor.toml ]]; then
        say "would write $CONF_DIR/$name.toml: floor.toml with cert and key floor/$name.*"
        continue
    fi
    if ! { grep -qx 'cert = "floor/floor-collector.crt"' "$CONF_DIR/floor.toml" &&
        grep -qx 'key = "floor/floor-collector.key"' "$CONF_DIR/floor.toml"; }; then
        die "--collector $name: $CONF_DIR/floor.toml's [broker] cert and key are not the installed" \
            "floor/floor-collector.crt and .key: write $CONF_DIR/$name.toml yourself (floor.toml with its own cert and key)"
    fi
    { printf '# %s: floor.toml with its own certificate (install-floor.sh --collector %s)\n' "$name" "$name"
      sed -e "s|^cert = \"floor/floor-collector.crt\"|cert = \"floor/$name.crt\"|" \
          -e "s|^key = \"floor/floor-collector.key\"|key = \"floor/$name.key\"|" "$CONF_DIR/floor.toml"
    } >"$SCRATCH/$name.toml"
    run install -m 0644 "$SCRATCH/$name.toml" "$CONF_DIR/$name.toml"
done

# -- the code: a venv per version, switched by a symlink --------------------------------
CODE_CHANGED=0
if [[ $INSTALLED == "$VERSION" ]]; then
    say "dealerbox $VERSION is installed in $CURRENT: kept"
else
    make_venv
    # As the service user, which runs the units: a venv it cannot run (made with an
    # interpreter under /root) or a config it cannot read fails here, before the switch.
    say "dealerbox $VERSION, run as $SERVICE_USER, reads $CONF_DIR/floor.toml"
    for name in floor "${COLLECTORS[@]}"; do
        if ! run runuser -u "$SERVICE_USER" -- "$NEW/bin/dealerbox" --version ||
            ! run runuser -u "$SERVICE_USER" -- "$NEW/bin/python" -I -c \
                'import sys; from dealerbox.floor.operating.settings import load_collector; load_collector(sys.argv[1])' \
                "$CONF_DIR/$name.toml"; then
            run rm -rf "$NEW"
            die "dealerbox $VERSION cannot run as $SERVICE_USER on $CONF_DIR/$name.toml (above; the venv" \
                "was made with $PYTHON: --python FILE names another)${INSTALLED:+: dealerbox $INSTALLED stays in use}"
        fi
    done
    switch_venv
    CODE_CHANGED=1
fi
install_docs

# -- the units -------------------------------------------------------------------------
((COLLECTORS_ONLY)) && UNITS=()
say "systemd units ${UNITS[*]} ${COLLECTORS[*]/#/dealerbox-floor-collector@}"
UNITS_EXISTED=1
UNITS_CHANGED=0
for unit in "${UNITS[@]}"; do
    [[ -f $UNIT_DIR/$unit ]] || UNITS_EXISTED=0
    install_file "$REPO/systemd/$unit" "$UNIT_DIR/$unit" 0644 && UNITS_CHANGED=1
done
# The broker's health check (a CONNACK within 5 s, or mosquitto is restarted) where the
# broker runs: docs/floor/group.md, "Bridge outages".
# A wedged 2.0.11 ignores the SIGTERM of that restart: the drop-in bounds its wait.
if ((!COLLECTORS_ONLY)); then
    for unit in "${BROKER_CHECK_UNITS[@]}"; do
        install_file "$REPO/systemd/$unit" "$UNIT_DIR/$unit" 0644 && UNITS_CHANGED=1
    done
    install_file "$REPO/systemd/mosquitto-dealerbox.conf" "$UNIT_DIR/$BROKER_DROPIN" 0644 && UNITS_CHANGED=1
fi
if ((${#COLLECTORS[@]})) || [[ -f $UNIT_DIR/$COLLECTOR_UNIT ]]; then
    install_file "$REPO/systemd/$COLLECTOR_UNIT" "$UNIT_DIR/$COLLECTOR_UNIT" 0644 && UNITS_CHANGED=1
fi
((UNITS_CHANGED)) && run systemctl daemon-reload
for name in "${COLLECTORS[@]}"; do UNITS+=("dealerbox-floor-collector@$name.service"); done
if ((COLLECTORS_ONLY)); then
    run systemctl enable "${UNITS[@]}"
else
    run systemctl enable mosquitto.service "${UNITS[@]}"
    run systemctl enable --now dealerbox-broker-check.timer
fi

# A new listener or key needs a restart: every table reconnects, and each shows
# offline once (the broker sends every Last Will when it stops). A new ACL only a
# reload. try-: only when mosquitto runs (--start starts it).
if ((COLLECTORS_ONLY)); then
    :
elif ((START)); then
    run systemctl restart mosquitto.service
elif ((SNIPPET_CHANGED || BROKER_KEY_NEW)); then
    say "restarting mosquitto for the new listener (every table reconnects)"
    run systemctl try-restart mosquitto.service
elif ((ACL_CHANGED)); then
    run systemctl try-reload-or-restart mosquitto.service
fi
if ((START)) || { ((CODE_CHANGED)) && ((UNITS_EXISTED)); }; then
    say "restarting ${UNITS[*]} on dealerbox $VERSION"
    run systemctl restart "${UNITS[@]}"
else
    say "done; the collector and the web view start at boot (or now: systemctl start ${UNITS[*]})"
fi
say "next: a certificate per table (dealerbox-floor-ca client T01) and a first web user"
say "  (dealerbox-floor user add NAME --role admin --config /etc/dealerbox/floor.toml: docs/floor/security.md)"
