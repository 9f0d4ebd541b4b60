#!/bin/sh
# The casino's floor-reporting PKI, with the openssl command line only.
#
#   make-ca.sh DIR init                   a new CA (ca.key, ca.crt) and an empty CRL
#   make-ca.sh DIR broker NAME [IP...]    the broker's server certificate, broker.crt and
#                                         broker.key (CN and SAN: NAME, and the IPs)
#   make-ca.sh DIR web NAME [IP...]       the floor web view's server certificate,
#                                         floor-web.crt and floor-web.key (as broker)
#   make-ca.sh DIR client CN [CN...]      one client certificate per CN: a table id,
#                                         floor-collector, or floor-view
#   make-ca.sh DIR revoke CN              revoke CN's certificate and rewrite ca.crl
#   make-ca.sh DIR crl                    rewrite ca.crl (it is valid for a year: a
#                                         broker refuses every client once it expires)
#
# The broker takes the client's identity from the certificate's CN
# (use_identity_as_username), so CN = table id is what the ACL checks. Names
# beginning with "floor-" are the floor's own roles and are never table ids.
# After "revoke", reload mosquitto (SIGHUP) so it reads the new CRL.
set -eu

usage() {
    echo "usage: $0 DIR init | broker NAME [IP...] | web NAME [IP...] | client CN [CN...] | revoke CN | crl" >&2
    exit 2
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
    ;;
client)
    [ $# -ge 1 ] || usage
    dir=$(cd "$dir" && pwd)
    for cn in "$@"; do
        valid_cn "$cn"
        FLOOR_SAN=DNS:unused sign "$cn" client_ext
    done
    ;;
revoke)
    [ $# -eq 1 ] || usage
    dir=$(cd "$dir" && pwd)
    valid_cn "$1"
    FLOOR_SAN=DNS:unused openssl ca -config "$dir/openssl.cnf" -revoke "$dir/$1.crt" 2>/dev/null
    FLOOR_SAN=DNS:unused write_crl
    ;;
crl)
    dir=$(cd "$dir" && pwd)
    FLOOR_SAN=DNS:unused write_crl
    ;;
*)
    usage
    ;;
esac
