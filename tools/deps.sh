#!/bin/sh
# SPDX-License-Identifier: MIT
# memaccept: make sure the tools a make target needs are installed (Debian packages).
# Usage: tools/deps.sh GROUP...   groups: build run test image report fuzz
# As root with apt-get: installs what is missing. Otherwise: prints the command and fails.
set -u

need=""
add() { # add PACKAGE if the probe fails
	pkg=$1; shift
	"$@" >/dev/null 2>&1 || case " $need " in *" $pkg "*) ;; *) need="$need $pkg" ;; esac
}
has() { command -v "$1"; }
file() { test -e "$1"; }
pymod() { /usr/bin/python3 -c "import $1"; }

for group in "$@"; do
	case $group in
	build)
		add make has make
		add gcc has gcc
		add nasm has nasm
		add lld has ld.lld
		add gnu-efi file /usr/include/efi/efi.h
		add python3 file /usr/bin/python3
		;;
	run)
		add qemu-system-x86 has qemu-system-x86_64
		add ovmf file /usr/share/OVMF/OVMF_CODE_4M.fd
		;;
	test)
		add gcc has gcc
		add libasan8 file /usr/lib/x86_64-linux-gnu/libasan.so.8
		add libubsan1 file /usr/lib/x86_64-linux-gnu/libubsan.so.1
		;;
	image)
		add dosfstools has mkfs.fat
		add mtools has mcopy
		add fdisk has sfdisk
		;;
	report)
		add python3-matplotlib pymod matplotlib
		;;
	fuzz)
		add clang has clang
		add libclang-rt-14-dev sh -c 'ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a'
		;;
	*)
		echo "deps.sh: unknown group $group" >&2
		exit 2
		;;
	esac
done

[ -z "$need" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
	echo "deps: installing$need"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q$need >/tmp/memaccept-apt.log 2>&1; then
		apt-get update -q >/dev/null 2>&1
		if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q$need >/tmp/memaccept-apt.log 2>&1; then
			echo "deps: apt-get install failed; see /tmp/memaccept-apt.log" >&2
			exit 1
		fi
	fi
	exit 0
fi
echo "deps: missing packages:$need" >&2
echo "deps: run: sudo apt-get install$need" >&2
exit 1
