#!/bin/sh
# SPDX-License-Identifier: MIT
# memaccept: a GPT disk image with one EFI system partition holding the image and its command line.
# Usage: mkimage.sh IMAGE.efi "COMMAND LINE" OUT.img
# The partition holds \EFI\BOOT\BOOTX64.EFI (the removable-media path every UEFI boot
# manager tries) and \memaccept.cfg. Any UEFI VM boots the result as a plain disk.
set -eu
efi=$1
args=$2
out=$3
ESP_MIB=64
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

mkfs.fat -F 32 -n MEMACCEPT -C "$tmp/esp.img" $((ESP_MIB * 1024)) >/dev/null
mmd -i "$tmp/esp.img" ::/EFI ::/EFI/BOOT
mcopy -i "$tmp/esp.img" "$efi" ::/EFI/BOOT/BOOTX64.EFI
printf '%s\n' "$args" >"$tmp/memaccept.cfg"
mcopy -i "$tmp/esp.img" "$tmp/memaccept.cfg" ::/memaccept.cfg

# 1 MiB before the partition (protective MBR, GPT header and entries), 1 MiB after it
# for the backup GPT.
rm -f "$out"
truncate -s $((ESP_MIB + 2))M "$out"
# C12A7328-F81F-11D2-BA4B-00A0C93EC93B: EFI system partition (UEFI 2.9, table 5-7).
printf 'label: gpt\nstart=2048, size=%d, type=C12A7328-F81F-11D2-BA4B-00A0C93EC93B, name="EFI system partition"\n' \
	$((ESP_MIB * 2048)) | sfdisk -q "$out"
dd if="$tmp/esp.img" of="$out" bs=1M seek=1 conv=notrunc status=none
echo "mkimage: $out: GPT, ESP of $ESP_MIB MiB, command line: ${args:-(none)}"
