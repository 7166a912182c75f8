// SPDX-License-Identifier: GPL-2.0
/*
 * Deferred wakeup placement: the spread, backlog_latency, lock_handoff and
 * tick_quiet tests of defer_test.c, built from it as a program of their
 * own, so that tests/defer/vm runs them at the 2-socket shape (2 LLCs) and
 * the functional tests at 16 vCPUs, each without the other's cost. The
 * helpers they do not use are left unused here.
 */
#define DEFER_PLACE
#pragma GCC diagnostic ignored "-Wunused-function"
#include "defer_test.c"
