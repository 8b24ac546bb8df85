#!/bin/sh
# Installs the cort Python package for Debian's python3:
#   python/install.sh PREFIX LIBDIR
# copies python/cort to $DESTDIR$PREFIX/lib/python3/dist-packages/cort and records LIBDIR/libcort.so
# (the path the library has at run time, without DESTDIR) in cort/_libpath.py.
# Example: python/install.sh /usr/local /usr/local/lib
set -eu
if [ $# -ne 2 ]; then
    echo "usage: $0 PREFIX LIBDIR" >&2
    exit 2
fi
prefix=$1
libdir=$2
src=$(cd "$(dirname "$0")" && pwd)/cort
dest=${DESTDIR:-}$prefix/lib/python3/dist-packages/cort

rm -rf "$dest"
mkdir -p "$dest/capi" "$dest/quantization"
for f in "$src"/*.py; do
    case $(basename "$f") in _libpath.py) continue ;; esac
    install -m 644 "$f" "$dest/"
done
install -m 644 "$src"/capi/*.py "$dest/capi/"
install -m 644 "$src"/quantization/*.py "$dest/quantization/"
# repr() quoting through Python keeps any path (spaces, quotes) a valid literal.
/usr/bin/env python3 -c 'import sys; print("# written by python/install.sh\nLIBRARY = %r" % sys.argv[1])' \
    "$libdir/libcort.so" > "$dest/_libpath.py"
chmod 644 "$dest/_libpath.py"
echo "installed cort Python package to $dest (library: $libdir/libcort.so)"
