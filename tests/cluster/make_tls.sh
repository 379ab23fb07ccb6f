#!/usr/bin/env bash
# Certificates for a TLS etcd on a netns cluster (etcd_cluster.sh with ETCD_TLS_DIR=DIR):
#   make_tls.sh DIR I J K...
# DIR/ca.pem (the job's CA); DIR/member.I.pem/.key for each host (its address as an IP SAN);
# DIR/client.pem/.key (a launcher's); DIR/rogue-ca.pem and DIR/rogue-client.pem/.key (another
# CA's, which etcd must refuse, and which must not vouch for etcd).
set -eu
CLUSTER="$(dirname "$0")/netns_cluster.sh"
dir=$1
shift
mkdir -p "$dir"
cd "$dir"
ca() {  # ca NAME
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
    -subj "/CN=$1" -keyout "$1.key" -out "$1.pem" 2>/dev/null
}
signed() {  # signed NAME CA CN EXTENSIONS (CN "": none)
  openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "${3:+/CN=$3}/O=aml-launch test" \
    -keyout "$1.key" -out "$1.csr" 2>/dev/null
  printf '%s\n' "$4" >"$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days 2 \
    -extfile "$1.ext" -out "$1.pem" 2>/dev/null
}
ca ca
ca rogue-ca
for i in "$@"; do
  signed "member.$i" ca "etcd-$i" "subjectAltName=IP:$(bash "$CLUSTER" addr "$i")
extendedKeyUsage=serverAuth,clientAuth"
done
# No CommonName in a launcher's certificate: etcd's JSON gateway refuses one that has it when
# etcd's authentication is on (it could not pass the name on as the user).
signed client ca "" "extendedKeyUsage=clientAuth"
signed rogue-client rogue-ca "" "extendedKeyUsage=clientAuth"
