#!/bin/sh
# The casino's floor-reporting PKI, with the openssl command line only.
#
#   make-ca.sh DIR init                   a new CA (ca.key, ca.crt) and an empty CRL
#   make-ca.sh DIR broker NAME [IP...]    the broker's server certificate, broker.crt and
#                                         broker.key (CN and SAN: NAME, and the IPs)
#   make-ca.sh DIR web NAME [IP...]       the floor web view's server certificate,
#                                         floor-web.crt and floor-web.key (as broker)
#   make-ca.sh DIR client CN [CN...]      one client certificate per CN: a table id,
#                                         floor-collector, floor-view or floor-admin;
#                                         refused for a CN that has a valid one
#   make-ca.sh DIR client --replace CN... revoke every valid certificate of each CN,
#                                         then issue a new one (and rewrite ca.crl)
#   make-ca.sh DIR revoke CN              revoke every valid certificate of CN and
#                                         rewrite ca.crl
#   make-ca.sh DIR kick CN                end CN's open session on the broker (its
#                                         dynamic security plugin, as floor-admin)
#   make-ca.sh DIR crl                    rewrite ca.crl (it is valid for a year: a
#                                         broker refuses every client once it expires)
#
# The broker takes the client's identity from the certificate's CN
# (use_identity_as_username), so CN = table id is what the ACL checks. Names
# beginning with "floor-" are the floor's own roles and are never table ids.
# A CN has one valid certificate at a time: a second one would be a second
# device speaking as that table, which "revoke CN" might then miss.
#
# Revoking, and replacing, is done in three steps, in this order (docs/floor/security.md):
# "revoke CN" (or "client --replace CN"); reload mosquitto (SIGHUP: new
# connections are checked against the new ca.crl); "kick CN" (the session that
# is open now ends, and the device cannot come back with the revoked
# certificate). Kicking before the reload lets it straight back in.
set -eu

usage() {
    echo "usage: $0 DIR init | broker NAME [IP...] | web NAME [IP...] | client [--replace] CN [CN...] | revoke CN | kick CN | crl" >&2
    exit 2
}

die() {
    echo "$0: $*" >&2
    exit 1
}

[ $# -ge 2 ] || usage
dir=$1
command=$2
shift 2
days=${FLOOR_CERT_DAYS:-825}

valid_cn() {
    case $1 in
        ''|*[!A-Za-z0-9_.-]*) echo "$0: '$1' is not a valid name (letters, digits, _ . -)" >&2; exit 2 ;;
    esac
}

write_config() {
    cat > "$dir/openssl.cnf" <<CNF
[ ca ]
default_ca = floor_ca

[ floor_ca ]
dir = $dir
database = \$dir/index.txt
serial = \$dir/serial
crlnumber = \$dir/crlnumber
new_certs_dir = \$dir/issued
certificate = \$dir/ca.crt
private_key = \$dir/ca.key
default_md = sha256
default_days = $days
default_crl_days = 365
policy = any_cn
unique_subject = no
copy_extensions = none

[ any_cn ]
commonName = supplied

[ client_ext ]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = clientAuth

[ server_ext ]
basicConstraints = critical, CA:false
keyUsage = critical, digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = \${ENV::FLOOR_SAN}
CNF
}

new_key() {
    (umask 077 && openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null)
}

sign() {  # sign CN EXTENSION [FILE]: FILE.key and FILE.crt (FILE defaults to CN)
    file=${3:-$1}
    new_key "$dir/$file.key"
    openssl req -new -key "$dir/$file.key" -subj "/CN=$1" -out "$dir/$file.csr"
    openssl ca -batch -notext -config "$dir/openssl.cnf" -extensions "$2" \
        -in "$dir/$file.csr" -out "$dir/$file.crt" 2>/dev/null
    rm -f "$dir/$file.csr"
}

write_crl() {
    openssl ca -gencrl -config "$dir/openssl.cnf" -out "$dir/ca.crl" 2>/dev/null
}

# The serials of CN's certificates that are valid today, one a line. The
# index marks a certificate V when issued and R when revoked; -updatedb first
# marks the expired ones E.
valid_serials() {
    FLOOR_SAN=DNS:unused openssl ca -config "$dir/openssl.cnf" -updatedb >/dev/null 2>&1 || true
    awk -F '\t' -v subject="/CN=$1" '$1 == "V" && $6 == subject { print $4 }' "$dir/index.txt"
}

# Revoke every valid certificate of CN; prints how many.
revoke_all() {
    count=0
    for serial in $(valid_serials "$1"); do
        FLOOR_SAN=DNS:unused openssl ca -config "$dir/openssl.cnf" \
            -revoke "$dir/issued/$serial.pem" 2>/dev/null \
            || die "cannot revoke $1's certificate $serial (is $dir/issued/$serial.pem there?)"
        count=$((count + 1))
    done
    echo "$count"
}

case $command in
init)
    [ ! -e "$dir/ca.key" ] || { echo "$0: $dir already holds a CA" >&2; exit 1; }
    mkdir -p "$dir/issued"
    dir=$(cd "$dir" && pwd)
    : > "$dir/index.txt"
    echo 1000 > "$dir/serial"
    echo 1000 > "$dir/crlnumber"
    write_config
    new_key "$dir/ca.key"
    openssl req -new -x509 -key "$dir/ca.key" -subj "/CN=dealerbox floor CA" \
        -days 3650 -addext "basicConstraints=critical,CA:true" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" -out "$dir/ca.crt"
    FLOOR_SAN=DNS:unused write_crl
    echo "made a CA in $dir: ca.crt (on every table), ca.key (root's alone), ca.crl" >&2
    ;;
broker|web)
    [ $# -ge 1 ] || usage
    dir=$(cd "$dir" && pwd)
    name=$1
    shift
    valid_cn "$name"
    san="DNS:$name"
    for ip in "$@"; do san="$san,IP:$ip"; done
    file=broker
    [ "$command" = broker ] || file=floor-web
    FLOOR_SAN=$san sign "$name" server_ext $file
    echo "made $dir/$file.crt and $dir/$file.key for ${san}" >&2
    if [ "$command" = web ]; then
        echo "the view runs as dealerbox-floor: install-floor.sh --web-name $name puts them in" \
             "/etc/dealerbox/floor/ where it can read them (docs/floor/install.md, [web] in floor.toml)" >&2
    fi
    ;;
client)
    replace=0
    if [ "${1:-}" = --replace ]; then replace=1; shift; fi
    [ $# -ge 1 ] || usage
    dir=$(cd "$dir" && pwd)
    # Every CN is checked before any is issued: all or nothing.
    for cn in "$@"; do
        valid_cn "$cn"
        serials=$(valid_serials "$cn" | tr '\n' ' ')
        if [ -n "$serials" ] && [ "$replace" = 0 ]; then
            die "$cn has a valid certificate already (serial ${serials% }): a second one would be a second" \
                "device speaking as $cn. To replace it (a new Pi, a lost key): client --replace $cn," \
                "which revokes the old one first"
        fi
    done
    revoked=0
    for cn in "$@"; do
        if [ "$replace" = 1 ]; then
            count=$(revoke_all "$cn")
            revoked=$((revoked + count))
        fi
        FLOOR_SAN=DNS:unused sign "$cn" client_ext
        echo "made $dir/$cn.crt and $dir/$cn.key (CN $cn)" >&2
    done
    if [ "$revoked" -gt 0 ]; then
        FLOOR_SAN=DNS:unused write_crl
        echo "revoked $revoked certificate(s) of $*; now reload mosquitto, then kick each CN" \
             "(docs/floor/security.md, Revoking a table)" >&2
    fi
    ;;
revoke)
    [ $# -eq 1 ] || usage
    dir=$(cd "$dir" && pwd)
    valid_cn "$1"
    revoked=$(revoke_all "$1")
    [ "$revoked" -gt 0 ] || die "$1 has no valid certificate to revoke"
    FLOOR_SAN=DNS:unused write_crl
    echo "revoked $revoked certificate(s) of $1; now reload mosquitto, then kick $1" \
         "(docs/floor/security.md, Revoking a table)" >&2
    ;;
kick)
    [ $# -eq 1 ] || usage
    dir=$(cd "$dir" && pwd)
    valid_cn "$1"
    for file in ca.crt floor-admin.crt floor-admin.key; do
        [ -r "$dir/$file" ] || die "no $dir/$file (install-floor.sh issues floor-admin's certificate)"
    done
    # mosquitto_ctrl exits 0 even when the broker refused the command: its
    # errors are on stderr, and a command that worked prints nothing there.
    ctrl() {
        mosquitto_ctrl -h "${FLOOR_BROKER_HOST:-127.0.0.1}" -p "${FLOOR_BROKER_PORT:-8883}" \
            --cafile "$dir/ca.crt" --cert "$dir/floor-admin.crt" --key "$dir/floor-admin.key" \
            dynsec "$@" </dev/null 2>&1 >/dev/null
    }
    # The plugin ends the sessions of a client it deletes: make CN one of its
    # clients for a moment (no password: it could not sign in with one anyway,
    # the listener takes certificates only), then delete it. One left over by
    # an interrupted kick is fine.
    out=$(ctrl createClient "$1") || die "mosquitto_ctrl failed: $out"
    case $out in
        '' | *'already exists'*) ;;
        *) die "the broker refused to kick $1: $out" ;;
    esac
    out=$(ctrl deleteClient "$1") || die "mosquitto_ctrl failed: $out"
    [ -z "$out" ] || die "the broker refused to kick $1: $out"
    echo "$1: its open session, if any, has ended" >&2
    ;;
crl)
    dir=$(cd "$dir" && pwd)
    FLOOR_SAN=DNS:unused write_crl
    echo "wrote $dir/ca.crl: now reload mosquitto" >&2
    ;;
*)
    usage
    ;;
esac
