/* SPDX-License-Identifier: MIT */
/* memaccept: the guest's exit codes, as written to isa-debug-exit (QEMU exits with code*2+1). */
#ifndef INCLUDE_EXIT_CODES_H
#define INCLUDE_EXIT_CODES_H

/* Plain constants: used by C, and mirrored by tools/memaccept.py for the host side. */
#define EXIT_OK 0                /* workload or test case finished as expected */
#define EXIT_TEST_FAILED 1       /* an in-guest test case reported a failure */
#define EXIT_PANIC 2             /* a broken invariant inside memaccept */
#define EXIT_EXCEPTION 3         /* an unexpected CPU exception */
#define EXIT_UNACCEPTED_ACCESS 4 /* something touched memory that was not accepted */
#define EXIT_OUT_OF_MEMORY 5     /* the workload asked for more than the guest has */
#define EXIT_BOOT_FAILED 6       /* efi_main could not reach the kernel */
#define EXIT_PLATFORM_FATAL 7    /* the platform returned a status we must not continue after */
#define EXIT_HOST_HOSTILE 8      /* the host or firmware broke a security invariant */
#define EXIT_BAD_CONFIG 9        /* the command line asked for something impossible */
/*
 * Test image only, never memaccept's own verdict: the emulated host stopped the VM (a
 * fatal report or termination request, a vCPU halted for good). A real QEMU ends such a
 * VM with its own status, not the guest's; memaccept's verdict is the `exit` event it
 * printed before asking the host to stop it.
 */
#define EXIT_HOST_STOPPED 100

#endif
