#!/usr/bin/env bash
# Tests the C API end to end, as a C or C++ user meets it. Run from anywhere in the repository:
#
#   scripts/test-c.sh
#
# 1. installs what a fresh Debian machine lacks (cmake, pkg-config, valgrind, a C/C++ compiler via
#    apt-get when run as root; the pinned cbindgen via cargo install);
# 2. regenerates include/btchol.h with the pinned cbindgen and fails when the committed one is stale;
#    checks the header is ASCII and compiles alone as C99 and C++11 with -Wall -Wextra -pedantic;
# 3. CMake configure + build + ctest in build/ (examples and the C API test, as C and as C++);
# 4. checks the shared library's SONAME and that it exports exactly the header's functions;
# 5. installs to a temporary prefix and builds, against that installed copy only: the consumer
#    project (find_package), the examples (find_package, standalone), and the consumer with
#    pkg-config (shared and static);
# 6. runs the examples and the C API test under valgrind (definite/indirect leaks and invalid
#    accesses fail; "still reachable" and "possibly lost" blocks of the Rust runtime and of the
#    thread pools' threads do not).
# Ends with `c-api: N passed, M failed` and exits non-zero on any failure. build/ is reused, so a
# second run only rebuilds what changed.
set -uo pipefail
cd "$(dirname "$0")/.."

# Pinned header generator (also named in cbindgen.toml).
CBINDGEN_VERSION=0.29.4
BUILD_DIR=${BTCHOL_C_BUILD_DIR:-build}
JOBS=$(nproc 2>/dev/null || echo 2)

passed=0
failed=0
failed_steps=()
step() { # step NAME COMMAND...: one counted check
    local name=$1
    shift
    echo "=== c-api: $name"
    local rc=0
    "$@" || rc=$?
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        failed_steps+=("$name (exit code $rc)")
        echo "--- FAILED: $name (exit code $rc)"
    fi
}
finish() {
    echo
    for s in "${failed_steps[@]}"; do echo "FAILED: $s"; done
    echo "c-api: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit $?
}

# ---- 1. tools ----
install_tools() {
    local missing=()
    command -v cmake >/dev/null || missing+=(cmake)
    command -v make >/dev/null || missing+=(make)
    command -v pkg-config >/dev/null || missing+=(pkg-config)
    command -v valgrind >/dev/null || missing+=(valgrind)
    command -v cc >/dev/null || missing+=(gcc)
    command -v c++ >/dev/null || missing+=(g++)
    if [ ${#missing[@]} -gt 0 ]; then
        if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
            echo "installing ${missing[*]}"
            export DEBIAN_FRONTEND=noninteractive
            apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null || return 1
        else
            echo "missing tools: ${missing[*]} (install them, or run as root on Debian)"
            return 1
        fi
    fi
    # The pinned cbindgen: the one on PATH if it is that version, else a private copy.
    CBINDGEN=cbindgen
    if ! cbindgen --version 2>/dev/null | grep -qx "cbindgen $CBINDGEN_VERSION"; then
        local root="$BUILD_DIR/tools/cbindgen-$CBINDGEN_VERSION"
        CBINDGEN="$root/bin/cbindgen"
        if ! "$CBINDGEN" --version 2>/dev/null | grep -qx "cbindgen $CBINDGEN_VERSION"; then
            echo "installing cbindgen $CBINDGEN_VERSION into $root"
            cargo install cbindgen --version "$CBINDGEN_VERSION" --locked --root "$root" --quiet || return 1
        fi
    fi
    "$CBINDGEN" --version
}
step "tools (cmake, pkg-config, valgrind, compilers, cbindgen $CBINDGEN_VERSION)" install_tools || true
[ "$failed" -eq 0 ] || finish

TMP=$(mktemp -d "${TMPDIR:-/tmp}/btchol-test-c.XXXXXX")
trap 'rm -rf "$TMP"' EXIT

# ---- 2. the header ----
header_is_current() {
    "$CBINDGEN" --quiet --config cbindgen.toml --output "$TMP/btchol.h" src/capi/mod.rs || return 1
    if ! diff -u include/btchol.h "$TMP/btchol.h"; then
        echo "include/btchol.h is stale: regenerate it with"
        echo "  cbindgen --config cbindgen.toml --output include/btchol.h src/capi/mod.rs"
        return 1
    fi
}
header_is_plain() {
    if LC_ALL=C grep -n '[^[:print:][:space:]]' include/btchol.h; then
        echo "include/btchol.h has non-ASCII characters"
        return 1
    fi
    echo '#include <btchol.h>' >"$TMP/h.c"
    cc -std=c99 -Wall -Wextra -pedantic -Werror -Iinclude -fsyntax-only "$TMP/h.c" &&
        c++ -std=c++11 -Wall -Wextra -pedantic -Werror -Iinclude -fsyntax-only -x c++ "$TMP/h.c"
}
step "header is current (cbindgen $CBINDGEN_VERSION)" header_is_current
step "header is ASCII and compiles alone as C99 and C++11" header_is_plain

# ---- 3. in-tree CMake build and tests ----
configure() { cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release >"$TMP/configure.log" || { cat "$TMP/configure.log"; return 1; }; }
step "cmake configure" configure
step "cmake build (cargo + examples as C and C++)" cmake --build "$BUILD_DIR" -j "$JOBS"
step "ctest" bash -c "cd '$BUILD_DIR' && ctest --output-on-failure -j '$JOBS'"

# ---- 4. the shared library ----
version=$(sed -n 's/^version *= *"\([0-9.]*\)".*/\1/p' Cargo.toml | head -n1)
abi=$(sed -n 's/^#define BTCHOL_ABI_VERSION \([0-9]*\)$/\1/p' include/btchol.h)
LIB="$BUILD_DIR/lib/libbtchol.so.$version"
library_abi() {
    local soname exported declared
    soname=$(readelf -d "$LIB" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
    [ "$soname" = "libbtchol.so.$abi" ] || { echo "SONAME is '$soname', expected libbtchol.so.$abi"; return 1; }
    exported=$(nm -D --defined-only "$LIB" | awk '$2 == "T" {print $3}' | sort)
    # Declarations start in column 0 (comments start with " *").
    declared=$(grep -E '^[a-z].*[ *]btchol_[a-z0-9_]+\(' include/btchol.h | sed -E 's/^.*[ *](btchol_[a-z0-9_]+)\(.*$/\1/' | sort -u)
    if [ "$exported" != "$declared" ]; then
        echo "exported symbols differ from the header's functions:"
        diff <(echo "$declared") <(echo "$exported")
        return 1
    fi
    echo "SONAME $soname; $(echo "$exported" | wc -l) functions exported, all declared in the header"
}
step "shared library: SONAME libbtchol.so.<BTCHOL_ABI_VERSION>, exports = header" library_abi

# ---- 5. install, then build against the installed copy only ----
PREFIX="$TMP/prefix"
install_tree() {
    cmake --install "$BUILD_DIR" --prefix "$PREFIX" >/dev/null || return 1
    local libdir
    libdir=$(dirname "$(find "$PREFIX" -name "libbtchol.so.$version" | head -n1)")
    for f in "$libdir/libbtchol.so.$version" "$libdir/libbtchol.so.$abi" "$libdir/libbtchol.so" "$libdir/libbtchol.a" \
        "$PREFIX/include/btchol.h" "$libdir/cmake/btchol/btcholConfig.cmake" \
        "$libdir/cmake/btchol/btcholConfigVersion.cmake" "$libdir/pkgconfig/btchol.pc"; do
        [ -e "$f" ] || { echo "not installed: $f"; return 1; }
    done
    [ "$(readlink "$libdir/libbtchol.so.$abi")" = "libbtchol.so.$version" ] &&
        [ "$(readlink "$libdir/libbtchol.so")" = "libbtchol.so.$abi" ] || { echo "bad library symlinks"; return 1; }
    echo "$libdir" >"$TMP/libdir"
    find "$PREFIX" -type f -o -type l | sed "s|$PREFIX/||" | sort
}
step "cmake --install to a temporary prefix" install_tree
LIBDIR=$(cat "$TMP/libdir" 2>/dev/null || echo "$PREFIX/lib")

consumer_cmake() {
    cmake -S c-examples/consumer -B "$TMP/consumer" -DCMAKE_PREFIX_PATH="$PREFIX" >/dev/null &&
        cmake --build "$TMP/consumer" >/dev/null &&
        # grep without -q: with pipefail, grep -q exiting at the first match can kill ldd with
        # SIGPIPE and fail the step at random (seen once in CI).
        ldd "$TMP/consumer/consumer" | grep "$PREFIX" >/dev/null &&
        "$TMP/consumer/consumer"
}
step "consumer project: find_package(btchol) + btchol::btchol" consumer_cmake

examples_installed() {
    cmake -S c-examples -B "$TMP/examples" -DCMAKE_PREFIX_PATH="$PREFIX" -DCMAKE_BUILD_TYPE=Release >/dev/null &&
        cmake --build "$TMP/examples" -j "$JOBS" >/dev/null &&
        (cd "$TMP/examples" && ctest --output-on-failure -j "$JOBS")
}
step "c-examples standalone against the installed package" examples_installed

consumer_pkgconfig() {
    export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
    [ "$(pkg-config --modversion btchol)" = "$version" ] || { echo "pkg-config --modversion is not $version"; return 1; }
    # shellcheck disable=SC2046
    cc -Wall -Wextra -Werror c-examples/consumer/main.c $(pkg-config --cflags --libs btchol) -o "$TMP/consumer_pc" &&
        LD_LIBRARY_PATH="$LIBDIR" "$TMP/consumer_pc"
}
step "consumer with pkg-config (shared): cc \$(pkg-config --cflags --libs btchol)" consumer_pkgconfig

consumer_pkgconfig_static() {
    export PKG_CONFIG_PATH="$LIBDIR/pkgconfig"
    local private
    private=$(pkg-config --static --libs-only-l btchol | sed 's/-lbtchol//')
    # shellcheck disable=SC2086
    cc -Wall -Wextra -Werror c-examples/consumer/main.c $(pkg-config --cflags btchol) "$LIBDIR/libbtchol.a" $private \
        -o "$TMP/consumer_static" &&
        ! ldd "$TMP/consumer_static" | grep libbtchol >/dev/null &&
        "$TMP/consumer_static"
}
step "consumer with pkg-config (static): libbtchol.a + Libs.private" consumer_pkgconfig_static

# ---- 6. valgrind ----
under_valgrind() {
    valgrind -q --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --show-leak-kinds=definite,indirect "$@"
}
for prog in minimal_c minimal_cxx minimal_static_c kalman_smoother_c mpc_lq test_capi_c test_capi_cxx; do
    step "valgrind $prog" under_valgrind "$BUILD_DIR/c-examples/$prog"
done

finish
