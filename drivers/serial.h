/* SPDX-License-Identifier: MIT */
/* memaccept: 16550 UART on COM1, written through the platform's port I/O. */
#ifndef DRIVERS_SERIAL_H
#define DRIVERS_SERIAL_H

#include "include/types.h"

void serial_init(void);
void serial_putc(char c);

#endif
