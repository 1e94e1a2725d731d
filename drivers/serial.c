/* SPDX-License-Identifier: MIT */
/* memaccept: 16550 UART driver (COM1, 115200 8N1, polled). */
#include "arch/x86/platform.h"
#include "drivers/serial.h"

/* 16550 registers, offsets from the base port (PC16550D datasheet). */
#define COM1 0x3f8
#define UART_THR 0	/* transmit holding register (DLAB=0) */
#define UART_IER 1	/* interrupt enable (DLAB=0) */
#define UART_DLL 0	/* divisor latch low (DLAB=1) */
#define UART_DLM 1	/* divisor latch high (DLAB=1) */
#define UART_FCR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define LCR_DLAB 0x80
#define LCR_8N1 0x03
#define FCR_ENABLE_CLEAR 0x07
#define MCR_DTR_RTS 0x03
#define LSR_THRE 0x20	/* transmit holding register empty */

/*
 * Bounded wait for the transmitter: with no UART present (or a host that never drains
 * it), we drop characters instead of hanging the guest.
 */
#define TX_SPIN_LIMIT 100000

static bool serial_dead;

void serial_init(void)
{
	io_out8(COM1 + UART_IER, 0);
	io_out8(COM1 + UART_LCR, LCR_DLAB);
	io_out8(COM1 + UART_DLL, 1);	/* 115200 baud: divisor 1 of the 1.8432 MHz / 16 clock */
	io_out8(COM1 + UART_DLM, 0);
	io_out8(COM1 + UART_LCR, LCR_8N1);
	io_out8(COM1 + UART_FCR, FCR_ENABLE_CLEAR);
	io_out8(COM1 + UART_MCR, MCR_DTR_RTS);
	serial_dead = false;
}

void serial_putc(char c)
{
	if (serial_dead)
		return;
	for (int spin = 0; !(io_in8(COM1 + UART_LSR) & LSR_THRE); spin++) {
		if (spin == TX_SPIN_LIMIT) {
			serial_dead = true;
			return;
		}
	}
	io_out8(COM1 + UART_THR, (u8)c);
}
