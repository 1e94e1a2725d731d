/* SPDX-License-Identifier: MIT */
/* memaccept: the "sim" platform: fake unaccepted memory on a normal VM, accepted in software. */
#ifndef ARCH_X86_SIM_H
#define ARCH_X86_SIM_H

#include "arch/x86/platform.h"

const struct cc_platform *sim_platform(void);

#endif
