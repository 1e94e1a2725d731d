/* SPDX-License-Identifier: MIT */
/* memaccept: where the command line comes from: EFI load options, else \memaccept.cfg on the ESP. */
#include "boot/boot.h"
#include "drivers/console.h"
#include "lib/string.h"

#define CFG_FILE L"\\memaccept.cfg"

static bool printable(u32 c)
{
	return (c >= 0x20 && c < 0x7f) || c == '\t' || c == '\n' || c == '\r';
}

/*
 * LoadOptions are UCS-2 text when a shell or a boot entry passes a command line, but
 * firmware boot managers also pass binary data there (edk2 tags its auto-created boot
 * options with a GUID). Only clean text counts; the UEFI shell puts the program name
 * first, which we drop.
 */
static bool from_load_options(EFI_LOADED_IMAGE *li, char *buf, size_t size)
{
	const CHAR16 *w = li->LoadOptions;
	size_t n = li->LoadOptionsSize / sizeof(CHAR16), len = 0;

	if (!w || n == 0)
		return false;
	for (size_t i = 0; i < n && w[i]; i++) {
		if (!printable(w[i])) {
			kprintf("boot: load options (%u bytes) are not text; ignored\n",
				li->LoadOptionsSize);
			return false;
		}
		if (len + 1 >= size) {
			kprintf("boot: load options longer than %zu characters; ignored\n", size - 1);
			return false;
		}
		buf[len++] = (char)w[i];
	}
	buf[len] = 0;

	/* Drop a leading program name ("memaccept.efi" or "fs0:\...\BOOTX64.EFI"). */
	char *p = buf;

	while (*p == ' ')
		p++;
	char *tok = p;

	while (*p && *p != ' ' && *p != '=')
		p++;
	if (*p != '=' && p != tok)
		memmove(buf, p, strlen(p) + 1);
	for (p = buf; *p == ' ' || *p == '\t'; p++)
		;
	return *p != 0;
}

/* Lines starting with '#' are comments; line breaks separate options like spaces. */
static void strip_comments(char *buf)
{
	bool line_start = true, comment = false;

	for (char *p = buf; *p; p++) {
		if (*p == '\n' || *p == '\r') {
			line_start = true;
			comment = false;
			*p = ' ';
			continue;
		}
		if (line_start && *p == '#')
			comment = true;
		if (*p != ' ' && *p != '\t')
			line_start = false;
		if (comment)
			*p = ' ';
	}
}

static bool from_file(EFI_SYSTEM_TABLE *st, EFI_LOADED_IMAGE *li, char *buf, size_t size)
{
	EFI_GUID fs_guid = SIMPLE_FILE_SYSTEM_PROTOCOL;
	EFI_SIMPLE_FILE_SYSTEM_PROTOCOL *fs = NULL;
	EFI_FILE_HANDLE root = NULL, file = NULL;
	EFI_STATUS status;
	bool ok = false;

	status = st->BootServices->HandleProtocol(li->DeviceHandle, &fs_guid, (void **)&fs);
	if (EFI_ERROR(status) || !fs)
		return false;	/* not loaded from a file system: nothing to read */
	if (EFI_ERROR(fs->OpenVolume(fs, &root)))
		return false;
	status = root->Open(root, &file, CFG_FILE, EFI_FILE_MODE_READ, 0);
	if (EFI_ERROR(status)) {
		root->Close(root);
		return false;
	}
	UINTN n = size;	/* one byte more than fits, to notice a file that is too long */

	status = file->Read(file, &n, buf);
	if (EFI_ERROR(status)) {
		kprintf("boot: reading \\memaccept.cfg failed (status %#llx); using defaults\n",
			(unsigned long long)status);
	} else if (n >= size) {
		kprintf("boot: \\memaccept.cfg is longer than %zu bytes; ignored\n", size - 1);
	} else {
		buf[n] = 0;
		ok = true;
		for (UINTN i = 0; i < n; i++) {
			if (!printable((u8)buf[i])) {
				kprintf("boot: \\memaccept.cfg has a non-text byte %#x at offset %llu; "
					"ignored\n", (u8)buf[i], (unsigned long long)i);
				ok = false;
				break;
			}
		}
		if (ok)
			strip_comments(buf);
	}
	file->Close(file);
	root->Close(root);
	return ok;
}

u32 boot_read_cmdline(EFI_SYSTEM_TABLE *st, EFI_LOADED_IMAGE *li, char *buf, size_t size)
{
	buf[0] = 0;
	if (from_load_options(li, buf, size))
		return CMDLINE_LOAD_OPTIONS;
	buf[0] = 0;
	if (from_file(st, li, buf, size))
		return CMDLINE_FILE;
	buf[0] = 0;
	return CMDLINE_NONE;
}
