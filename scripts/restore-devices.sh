#!/usr/bin/env bash
# Restores /dev/null, /dev/zero and /dev/urandom where a regular file (or nothing) stands in the
# device's place, saying so: earlier versions of the test suite turned /dev/null into a regular
# file when run as root (zsh's compinit renamed its dump over it). Every later write by root then
# filled a file on disk, and daemons that open it as another user (munged) failed to start.
# Run by scripts/setup.sh and .ci/run; it leaves a sound device alone and changes nothing else.
# AML_DEVICES_ROOT=DIR restores DIR/dev/... instead (its test repairs a copy, never /dev).
set -eu
root=${AML_DEVICES_ROOT:-}
restore() {  # restore PATH MAJOR MINOR
  local path=$1 major=$2 minor=$3
  [ -c "$path" ] && return 0
  if [ -e "$path" ] && [ ! -f "$path" ]; then
    echo "restore-devices: $path is neither the device nor a regular file; left as it is" >&2
    return 0
  fi
  local sudo_cmd=()
  [ "$(id -u)" = 0 ] || sudo_cmd=(sudo)
  echo "restore-devices: $path was $( [ -e "$path" ] && echo "a regular file of $(stat -c %s "$path") bytes" || echo missing); making it the character device $major:$minor again (mknod -m 666 $path c $major $minor)"
  "${sudo_cmd[@]}" rm -f "$path"
  "${sudo_cmd[@]}" mknod -m 666 "$path" c "$major" "$minor"
}
restore "$root/dev/null" 1 3
restore "$root/dev/zero" 1 5
restore "$root/dev/urandom" 1 9
