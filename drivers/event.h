/* SPDX-License-Identifier: MIT */
/* memaccept: JSON Lines events on the console: one object per line, starting {"event":. */
#ifndef DRIVERS_EVENT_H
#define DRIVERS_EVENT_H

#include "include/types.h"

/*
 * Build one event field by field; ev_end() writes the whole line at once. Numbers are
 * plain integers (docs/reference.md, Events). Nested objects and arrays are allowed.
 *
 *   ev_begin("ready"); ev_u64("us", us); ev_str("platform", "sim"); ev_end();
 */
void ev_begin(const char *event);
void ev_u64(const char *key, u64 v);
void ev_str(const char *key, const char *v);
void ev_bool(const char *key, bool v);
void ev_obj_begin(const char *key);
void ev_obj_end(void);
void ev_arr_begin(const char *key);
void ev_arr_u64(u64 v);
void ev_arr_end(void);
/* key: [v0, v1, ...] */
void ev_u64_array(const char *key, const u64 *v, unsigned n);
void ev_end(void);

#endif
